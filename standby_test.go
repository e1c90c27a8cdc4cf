package leadership

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/electionrecord"
)

// standbyClaimOf reads the election's standby claim, if any.
func standbyClaimOf(t *testing.T, h Backend, key string) (claim, bool) {
	t.Helper()
	p, err := h.Get(ctxT(t), standbyKey(key), nil)
	if errors.Is(err, store.ErrKeyNotFound) {
		return claim{}, false
	}
	if err != nil {
		t.Fatalf("read the standby claim: %v", err)
	}
	return electionrecord.DecodeClaim(p.Value)
}

// noStandbyClaim fails the test if the election has a standby claim; what
// says the claim that should be gone.
func noStandbyClaim(t *testing.T, h Backend, key, what string) {
	t.Helper()
	if cl, ok := standbyClaimOf(t, h, key); ok {
		t.Fatalf("%s: %+v", what, cl)
	}
}

// standbyRunners starts n candidates with WithStandby, each reporting its
// store calls to its own metrics, and returns them with the leader first.
func standbyRunners(t *testing.T, c *cluster, key string, ttl time.Duration, n int, opts ...Option) ([]*runner, map[string]*recordedMetrics) {
	t.Helper()
	metrics := map[string]*recordedMetrics{}
	rs := make([]*runner, n)
	for i := range rs {
		name := fmt.Sprintf("node-%d", i)
		m := &recordedMetrics{}
		metrics[name] = m
		cand := NewCandidate(c.handle(), key, name, ttl, append([]Option{WithStandby(), WithMetrics(m)}, opts...)...)
		el, errs, err := cand.RunForElection()
		if err != nil {
			t.Fatalf("RunForElection %s: %v", name, err)
		}
		t.Cleanup(cand.Stop)
		rs[i] = &runner{Candidate: cand, name: name, elected: el, errs: errs}
	}
	l := leaderOf(t, rs)
	return append([]*runner{l}, except(rs, l)...), metrics
}

// usableStandbyClaim waits for two claims of candidates other than
// leader, the second a new write (another nonce), and returns it. The
// leader's claim watch dates a claim by the event that shows it; a claim
// its first read found (written while it started) has no known age and is
// not handed a term, so a test of the handoff waits for a claim written
// since. The runners' renew interval sets how long that takes.
func usableStandbyClaim(t *testing.T, h Backend, key, leader string) claim {
	t.Helper()
	var first, cl claim
	eventually(t, "a standby claim", func() bool {
		var ok bool
		first, ok = standbyClaimOf(t, h, key)
		return ok && first.Name != leader
	})
	eventually(t, "a standby claim written again", func() bool {
		var ok bool
		cl, ok = standbyClaimOf(t, h, key)
		return ok && cl.Name != leader && cl.Nonce != first.Nonce
	})
	return cl
}

// A leader that stops writes the next term for the last candidate to claim
// standby, which leads without a write of its own, with a greater token,
// long before the TTL would have let anyone take over.
func TestStandbyTakesTheNextTermWithoutAWrite(t *testing.T) {
	c := newCluster(t)
	const key = "standby"
	rs, metrics := standbyRunners(t, c, key, time.Minute, 3, WithRenewInterval(time.Second))
	l := rs[0]
	term, _ := l.CurrentTerm()
	h := c.handle()
	claimant := usableStandbyClaim(t, h, key, l.name).Name
	x := watchExclusion(t, rs[0].Candidate, rs[1].Candidate, rs[2].Candidate)
	l.Stop()
	succ := leaderAmong(t, "a successor", rs[1:])
	next, _ := succ.CurrentTerm()
	if next.Token <= term.Token {
		t.Fatalf("successor's token %d, not above %d", next.Token, term.Token)
	}
	rec := recordOf(t, h, key)
	t.Logf("claimant before Stop %s, successor %s, record %+v", claimant, succ.name, rec)
	if metrics[succ.name].has("call standby acquire ok") {
		t.Fatalf("%s acquired by a write of its own: %v", succ.name, metrics[succ.name].events)
	}
	if !metrics[succ.name].has("call standby claim ok") {
		t.Fatalf("%s never claimed standby: %v", succ.name, metrics[succ.name].events)
	}
	eventually(t, "the successor renews its handed term", func() bool { return metrics[succ.name].has("call standby renew ok") })
	if got := recordOf(t, h, key); got.Leader != succ.name || got.Term != next.Token || got.Claim != "" {
		t.Fatalf("record after the renewal %+v", got)
	}
	x.check(t)
}

// Resign hands over to a standby too, and the resigned candidate does not
// lead again while the successor renews.
func TestStandbyResignHandsOver(t *testing.T) {
	c := newCluster(t)
	const key = "standby-resign"
	rs, metrics := standbyRunners(t, c, key, time.Minute, 2, WithRenewInterval(time.Second))
	l, other := rs[0], rs[1]
	h := c.handle()
	usableStandbyClaim(t, h, key, l.name)
	l.Resign()
	recvUntil(t, other.elected, "the standby leads", func(v bool) bool { return v })
	if l.IsLeader() {
		t.Fatal("the resigned candidate leads beside its successor")
	}
	if metrics[other.name].has("call standby-resign acquire ok") {
		t.Fatalf("%s acquired by a write of its own", other.name)
	}
}

// leadingStandby is a candidate with WithStandby that leads, stopped when
// the test ends.
func leadingStandby(t *testing.T, h Backend, key, name string, ttl time.Duration) *Candidate {
	t.Helper()
	c := NewCandidate(h, key, name, ttl, WithStandby())
	t.Cleanup(c.Stop)
	if _, err := c.Campaign(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return c
}

// runningStandby starts a candidate with WithStandby, stopped when the test
// ends, and returns its elected channel.
func runningStandby(t *testing.T, h Backend, key, name string, ttl time.Duration) <-chan bool {
	t.Helper()
	c := NewCandidate(h, key, name, ttl, WithStandby())
	t.Cleanup(c.Stop)
	el, _, err := c.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	return el
}

// A waiting candidate that stops withdraws its claim, so no leader hands
// its term to a stopped candidate.
func TestStandbyClaimWithdrawnOnStop(t *testing.T) {
	c := newCluster(t)
	const key = "standby-withdraw"
	rs, _ := standbyRunners(t, c, key, time.Minute, 2)
	other := rs[1]
	h := c.handle()
	eventually(t, "a standby claim", func() bool { _, ok := standbyClaimOf(t, h, key); return ok })
	other.Stop()
	noStandbyClaim(t, h, key, "the stopped candidate's claim is still there")
}

// A claim left by a candidate that vanished: the leader hands it the term,
// it never takes it, and the remaining candidate takes over one TTL after
// it saw the handed record, as after a crash, never sooner.
func TestStandbyOfVanishedCandidateIsWaitedOut(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "standby-vanished", 500 * time.Millisecond
	h := c.handle()
	lead, el := ghostClaimed(t, c, h, key, ttl)
	lead.Stop()
	handed := time.Now()
	if rec := recordOf(t, h, key); rec.Leader != "ghost" || rec.Claim == "" {
		t.Fatalf("record after the leader stopped: %+v", rec)
	}
	recvUntil(t, el, "the last candidate leads", func(v bool) bool { return v })
	if waited := time.Since(handed); waited < ttl-50*time.Millisecond {
		t.Fatalf("took over %v after the handed record, within its TTL %v", waited, ttl)
	}
}

// A record naming this candidate for a claim it never wrote (a nonce not
// among its claims) is waited out like anyone else's record.
func TestStandbyIgnoresRecordForUnknownClaim(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "standby-unknown", 400 * time.Millisecond
	h := c.handle()
	a := leadingStandby(t, c.handle(), key, "a", ttl)
	el := runningStandby(t, c.handle(), key, "b", ttl)
	var cl claim
	eventually(t, "b's claim", func() bool { var ok bool; cl, ok = standbyClaimOf(t, h, key); return ok && cl.Name == "b" })
	a.Stop() // hands b the term for cl
	recvUntil(t, el, "b leads", func(v bool) bool { return v })
	// A forged record for b with a nonce b never sent, over b's record
	// (between two of b's renewals).
	eventually(t, "a forged record", func() bool {
		p, err := h.Get(ctxT(t), key, nil)
		if err != nil {
			t.Fatal(err)
		}
		forged, _ := decodeRecord(p.Value)
		forged.Term += 10
		forged.Seq = 0
		forged.Claim = strings.Repeat("0", 24)
		ok, _, err := h.AtomicPut(context.Background(), key, forged.Stamp(), p, nil)
		return ok && err == nil
	})
	recvUntil(t, el, "b steps down (its record was overwritten)", func(v bool) bool { return !v })
	began := time.Now()
	recvUntil(t, el, "b leads again after the forged record's TTL", func(v bool) bool { return v })
	if waited := time.Since(began); waited < ttl-50*time.Millisecond {
		t.Fatalf("b led again %v after the forged record, within its TTL %v", waited, ttl)
	}
}

// A claim not written again for two of its candidate's intervals (its
// candidate vanished long ago) is not used: the release frees the record
// and the remaining candidate leads at once.
func TestStandbyStaleClaimNotUsed(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "standby-stale", 500 * time.Millisecond
	h := c.handle()
	lead, el := ghostClaimed(t, c, h, key, ttl)
	cl, _ := standbyClaimOf(t, h, key)
	// Two intervals and the request timeout, with room: the leader renews
	// meanwhile.
	time.Sleep(2*cl.Every() + ttl + 200*time.Millisecond)
	if !lead.IsLeader() {
		t.Fatal("the leader lost its term while waiting")
	}
	lead.Stop()
	stopped := time.Now()
	recvUntil(t, el, "the last candidate leads", func(v bool) bool { return v })
	if took := time.Since(stopped); took >= ttl/2 {
		t.Fatalf("the last candidate led %v after Stop (TTL %v): the stale claim was used", took, ttl)
	}
}

// ghostClaimed starts a leader with WithStandby, a candidate "ghost" whose
// claim is left when its handle is cut off, and a last candidate without
// the option; it returns the leader and the last one's elected channel.
func ghostClaimed(t *testing.T, c *cluster, h Backend, key string, ttl time.Duration) (*Candidate, <-chan bool) {
	t.Helper()
	lead := leadingStandby(t, c.handle(), key, "leader", ttl)
	gone := c.handle()
	runningStandby(t, gone, key, "ghost", ttl)
	eventually(t, "the ghost's claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name == "ghost" })
	gone.Disconnect()
	last := NewCandidate(c.handle(), key, "last", ttl) // no standby: never claims
	t.Cleanup(last.Stop)
	el, _, err := last.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	return lead, el
}
