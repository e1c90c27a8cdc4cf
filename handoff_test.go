package leadership

import (
	"context"
	"errors"
	"testing"
	"time"
)

// HandOff gives the next term to the named candidate, not to the others,
// with a greater token, and the old term ends with ErrHandedOff.
func TestHandOffToNamedSuccessor(t *testing.T) {
	c := newCluster(t)
	// A TTL far longer than the test: only the handoff can move leadership
	// to the successor this fast, and the others would wait the window.
	rs := c.campaign("handoff", time.Minute, 4)
	x := watchExclusion(t, rs[0].Candidate, rs[1].Candidate, rs[2].Candidate, rs[3].Candidate)
	l := leaderOf(t, rs)
	term, _ := l.CurrentTerm()
	for _, succ := range except(rs, l) {
		eventually(t, succ.name+" sees the leader", func() bool { return succ.Leader() == l.name })
	}
	succ := except(rs, l)[2]
	start := time.Now()
	if err := l.HandOff(ctxT(t), succ.name); err != nil {
		t.Fatal(err)
	}
	t.Logf("handed over in %v", time.Since(start))
	// HandOff returned when the old leader saw the successor's record;
	// the successor leads once its write's reply reached it.
	next, err := succ.Campaign(ctxT(t))
	if err != nil || next.Token <= term.Token {
		t.Fatalf("successor's term %+v, %v; want a token above %d", next, err, term.Token)
	}
	if cause := context.Cause(term.Context()); !errors.Is(cause, ErrHandedOff) {
		t.Fatalf("old term's cause %v", cause)
	}
	for _, r := range except(rs, succ) {
		if r.IsLeader() {
			t.Fatalf("%s leads after the handoff to %s", r.name, succ.name)
		}
	}
	x.check(t)
}

// A successor that is not running: the others wait out the window, then
// one of them leads; HandOff reports the failure.
func TestHandOffToAbsentSuccessor(t *testing.T) {
	c := newCluster(t)
	const ttl = 500 * time.Millisecond
	l, other := c.leaderAndOther("handoff", ttl)
	eventually(t, "the other sees the leader", func() bool { return other.Leader() == l.name })
	released := time.Now()
	err := l.HandOff(ctxT(t), "nobody")
	if !errors.Is(err, ErrHandOffFailed) {
		t.Fatalf("HandOff to an absent candidate: %v", err)
	}
	recvUntil(t, other.elected, "the other leads after the window", func(v bool) bool { return v })
	if waited := time.Since(released); waited < ttl {
		t.Fatalf("the other led %v after the release, within the window %v", waited, ttl)
	}
}

// HandOff's bad input and a candidate that does not lead.
func TestHandOffErrors(t *testing.T) {
	c := newCluster(t)
	l, other := c.leaderAndOther("handoff", time.Second)
	if err := l.HandOff(ctxT(t), ""); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty successor: %v", err)
	}
	if err := l.HandOff(ctxT(t), l.name); !errors.Is(err, ErrInvalidSuccessor) {
		t.Fatalf("itself: %v", err)
	}
	if err := other.HandOff(ctxT(t), l.name); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("not leader: %v", err)
	}
	if !l.IsLeader() {
		t.Fatal("a refused HandOff ended the term")
	}
}
