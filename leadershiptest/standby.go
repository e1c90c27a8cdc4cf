package leadershiptest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leadership-go/leadership"
)

// acquireCounter counts a candidate's acquiring writes that landed.
type acquireCounter struct {
	leadership.NoMetrics
	n atomic.Int64
}

func (a *acquireCounter) StoreCall(_, op, outcome string, _ time.Duration) {
	if op == "acquire" && outcome == leadership.OutcomeOK {
		a.n.Add(1)
	}
}

// standbyClaimant is the name in the election's standby claim, or "".
func (e *env) standbyClaimant(cl *client) string {
	p, err := cl.Store.Get(context.Background(), strings.Trim(e.key, "/")+".standby", nil)
	if err != nil {
		return ""
	}
	var c struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(p.Value, &c)
	return c.Name
}

// testStandbyHandOver: with WithStandby, a leader that stops writes the
// next term for the waiting candidate that claimed standby, which leads
// at once without an acquiring write of its own.
func testStandbyHandOver(e *env) {
	counters := map[string]*acquireCounter{}
	cs := make([]*cand, 3)
	for i := range cs {
		name := fmt.Sprintf("node-%d", i)
		counters[name] = &acquireCounter{}
		cs[i] = e.candidate(e.client(), name, leadership.WithStandby(), leadership.WithMetrics(counters[name]))
	}
	x, f, l, term := e.watchedLeader(cs)
	reader := e.client()
	live := cs
	for round := range 2 {
		claimant := ""
		e.eventually("a waiting candidate's standby claim", func() bool {
			claimant = e.standbyClaimant(reader)
			return claimant != "" && claimant != l.name
		})
		before := counters[claimant].n.Load()
		from := f.leaders.len()
		start := time.Now()
		l.Stop()
		live = others(live, l)
		next, nt := e.leaderAfter(live, term.Token)
		took := nt.Began.Sub(start)
		e.timing(fmt.Sprintf("standby handoff after Stop, round %d", round), took)
		switch {
		case took >= e.ttl/2:
			e.t.Fatalf("round %d: standby handoff took %v: not at once (TTL %v); %s", round, took, e.ttl, since(start, f, cs...))
		case nt.Token != term.Token+1:
			e.t.Fatalf("round %d: token %d after %d", round, nt.Token, term.Token)
		case next.name == claimant && counters[claimant].n.Load() != before:
			e.t.Fatalf("round %d: the claimant %s acquired by a write of its own", round, claimant)
		case next.name != claimant:
			// Another claim came after the one read here: fine, if that
			// one took the term without a write either.
			e.t.Logf("round %d: claim read by the test named %s, %s took the term", round, claimant, next.name)
		}
		f.leaders.find(e.t, e.wait, from, "follower names the next leader", func(s string) bool { return s == next.name })
		l, term = next, nt
	}
	x.check(e.t)
}
