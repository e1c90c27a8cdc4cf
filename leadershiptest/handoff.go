package leadershiptest

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/overlap"
)

// handOffTTL is the lease of the HandOffToNewcomers subtest's candidates:
// long (10 s, or the suite's TTL if longer), so that a successor that
// missed the release, and took the term only when a read showed it, or
// lost it to a bystander after the window, is told from one that took it
// at once.
func handOffTTL(suiteTTL time.Duration) time.Duration { return max(10*time.Second, suiteTTL) }

// handOffRounds is the number of successive handoffs of the subtest, and
// handOffBound the time all of them must take together.
const (
	handOffRounds = 5
	handOffBound  = 3 * time.Second
)

// testHandOffToNewcomers: five HandOffs in a row, each to a candidate
// started just before it (its first read and its watch opened a moment
// before the release), while another candidate waits beside them. Each
// successor must take the term at once: a watch that opens just before the
// release may miss it (kvtools' etcd watch starts after its first read,
// from no revision), so the successor's own reads must find it, not a poll
// a TTL later; and the bystander must never take it instead.
func testHandOffToNewcomers(e *env) {
	ttl := handOffTTL(e.ttl)
	start := func(cl *client, name string) *cand {
		e.t.Helper()
		c := leadership.NewCandidate(cl.Store, e.key, name, ttl)
		var el <-chan bool
		var errs <-chan error
		e.mustStart("RunForElection "+name, func() (err error) {
			el, errs, err = c.RunForElection()
			return err
		})
		return e.recorded(c, name, cl, el, errs)
	}
	first := start(e.client(), "first")
	l, term := e.leader([]*cand{first})
	bystander := start(e.client(), "bystander")
	e.eventually("the bystander knows the leader", func() bool { return bystander.leader() == l.name })
	f := e.follower(e.client())
	f.leaders.find(e.t, e.wait, 0, "follower names the leader", func(s string) bool { return s == l.name })
	// The newcomers' clients are opened first: what is timed is a
	// candidate's start and the handoff to it.
	cls := make([]*client, handOffRounds)
	for i := range cls {
		cls[i] = e.client()
	}
	all := []*cand{first, bystander}
	// The sampler covers the newcomers from their start on.
	slots := make([]*atomic.Pointer[cand], handOffRounds)
	ps := []overlap.Participant{participant(first), participant(bystander)}
	for i := range slots {
		slots[i] = new(atomic.Pointer[cand])
		ps = append(ps, overlap.Participant{Name: fmt.Sprintf("newcomer-%d", i+1), Term: func() (uint64, bool) {
			if c := slots[i].Load(); c != nil {
				t, ok := c.CurrentTerm()
				return t.Token, ok
			}
			return 0, false
		}})
	}
	x := e.exclusionOf(ps)
	began := time.Now()
	for round := range handOffRounds {
		name := fmt.Sprintf("newcomer-%d", round+1)
		roundStart := time.Now()
		next := start(cls[round], name)
		all = append(all, next)
		slots[round].Store(next)
		if err := l.HandOff(e.ctx(), name); err != nil {
			e.t.Fatalf("round %d: %s's HandOff to %s, started just before: %v (after %v; %s)",
				round+1, l.name, name, err, time.Since(roundStart), since(roundStart, f, all...))
		}
		_, nt := e.leaderAfter([]*cand{next}, term.Token)
		e.timing(fmt.Sprintf("start of a newcomer and HandOff to it, round %d", round+1), time.Since(roundStart))
		if bystander.IsLeader() {
			e.t.Fatalf("round %d: the bystander leads", round+1)
		}
		l, term = next, nt
	}
	took := time.Since(began)
	e.timing(fmt.Sprintf("%d handoffs to newcomers", handOffRounds), took)
	if took > handOffBound {
		e.t.Fatalf("%d handoffs, each to a candidate started just before, took %v, over %v (TTL %v): a successor waited for a poll", handOffRounds, took, handOffBound, ttl)
	}
	_, v := f.leaders.find(e.t, e.wait, 0, "follower names the last successor", func(s string) bool { return s == l.name })
	e.timing("follower names the last successor, after the first handoff", v.at.Sub(began))
	expectLeadOnlyAmong(e, all, term)
	x.check(e.t)
}

// expectLeadOnlyAmong checks that no one but the holder of term leads now.
func expectLeadOnlyAmong(e *env, cs []*cand, term leadership.Term) {
	e.t.Helper()
	for _, c := range cs {
		if t, ok := c.CurrentTerm(); ok && t.Token != term.Token {
			e.t.Fatalf("%s leads term %d beside term %d", c.name, t.Token, term.Token)
		}
	}
}
