package leadership

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
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
		eventually(t, succ.name+" sees the leader", func() bool { return succ.leader() == l.name })
	}
	succ := except(rs, l)[2]
	start := time.Now()
	if err := l.HandOff(ctxT(t), succ.name); err != nil {
		t.Fatal(err)
	}
	t.Logf("handed over in %v", time.Since(start))
	// HandOff returned when the old leader saw the successor's record;
	// the successor leads once its write's reply reached it.
	next, err := succ.awaitTerm(ctxT(t))
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
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		const ttl = 500 * time.Millisecond
		l, other := c.leaderAndOther("handoff", ttl)
		eventually(t, "the other sees the leader", func() bool { return other.leader() == l.name })
		released := time.Now()
		err := l.HandOff(ctxT(t), "nobody")
		if !errors.Is(err, ErrHandOffFailed) {
			t.Fatalf("HandOff to an absent candidate: %v", err)
		}
		recvUntil(t, other.elected, "the other leads after the window", func(v bool) bool { return v })
		if waited := time.Since(released); waited < ttl {
			t.Fatalf("the other led %v after the release, within the window %v", waited, ttl)
		}
	})
}

// HandOff's bad input and a candidate that does not lead.
func TestHandOffErrors(t *testing.T) {
	c := newCluster(t)
	l, other := c.leaderAndOther("handoff", time.Second)
	if err := l.HandOff(ctxT(t), ""); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty successor: %v", err)
	}
	if err := l.HandOff(ctxT(t), l.name); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("itself: %v", err)
	}
	if err := other.HandOff(ctxT(t), l.name); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("not leader: %v", err)
	}
	if !l.IsLeader() {
		t.Fatal("a refused HandOff ended the term")
	}
}

// Two HandOffs at once are ordered: the one that ends the term names its
// successor, the other is refused (ErrHandOffInProgress) and names no one, so
// that it can neither replace nor clear the first one's successor.
func TestConcurrentHandOffsKeepTheFirstSuccessor(t *testing.T) {
	var b successorBox
	inStepDown, release := make(chan struct{}), make(chan struct{})
	first := make(chan bool)
	go func() {
		_, ok := b.offer("b", func() bool { close(inStepDown); <-release; return true })
		first <- ok
	}()
	<-inStepDown
	second := make(chan string)
	go func() {
		busy, ok := b.offer("c", func() bool { t.Error("a second offer ended a term"); return true })
		if ok {
			busy = "ok"
		}
		second <- busy
	}()
	close(release)
	if !<-first {
		t.Fatal("the first offer failed")
	}
	if busy := <-second; busy != "b" {
		t.Fatalf("the second offer: %q, want refused while b is named", busy)
	}
	if got := b.take(); got != "b" {
		t.Fatalf("successor %q, want b", got)
	}
	// A refused offer that found no term leaves nothing named.
	if _, ok := b.offer("c", func() bool { return false }); ok || b.take() != "" {
		t.Fatal("an offer without a term named a successor")
	}
}

// The same through the API: of two HandOffs racing, exactly one hands over,
// to the successor it named; the other gets ErrHandOffInProgress while the
// first is under way, or ErrNotLeader once its term has ended.
func TestConcurrentHandOffs(t *testing.T) {
	c := newCluster(t)
	rs := c.campaign("handoff2", time.Minute, 3)
	l := leaderOf(t, rs)
	others := except(rs, l)
	for _, o := range others {
		eventually(t, o.name+" sees the leader", func() bool { return o.leader() == l.name })
	}
	errs := make(chan error, 2)
	for _, o := range others {
		go func() { errs <- l.HandOff(ctxT(t), o.name) }()
	}
	var ok, refused int
	for range others {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, ErrHandOffInProgress), errors.Is(err, ErrNotLeader):
			refused++
		default:
			t.Fatalf("HandOff: %v", err)
		}
	}
	if ok != 1 || refused != 1 {
		t.Fatalf("%d handoffs succeeded and %d were refused, want 1 and 1", ok, refused)
	}
}

// failingPuts fails the next n compare-and-swaps without applying them, as
// a store that is briefly unreachable.
type failingPuts struct {
	Backend
	n atomic.Int32
}

func (s *failingPuts) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if s.n.Add(-1) >= 0 {
		return false, nil, store.ErrNotReachable
	}
	return s.Backend.AtomicPut(ctx, key, value, prev, opts)
}

// A release after HandOff that fails is retried to the same successor: the
// others still wait out the successor's window (the retry used to release
// the record to anyone, and a waiter took it at once).
func TestHandOffReleaseRetriedToTheSameSuccessor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		const ttl = 2 * time.Second
		h := &failingPuts{Backend: c.handle()}
		a := NewCandidate(h, "retry", "a", ttl)
		runCandidate(t, a)
		eventually(t, "a leads", a.IsLeader)
		other := NewCandidate(c.handle(), "retry", "c", ttl)
		runCandidate(t, other)
		eventually(t, "c sees a", func() bool { return other.leader() == "a" })
		h.n.Store(1) // the release fails once
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- a.HandOff(ctxT(t), "b") }() // b is not running
		eventually(t, "c leads after the window", other.IsLeader)
		if took := time.Since(start); took < ttl {
			t.Fatalf("c led %v after the handoff to b, within b's window of %v", took, ttl)
		}
		if err := <-done; !errors.Is(err, ErrHandOffFailed) {
			t.Fatalf("HandOff: %v, want ErrHandOffFailed", err)
		}
	})
}

// A candidate named successor takes the term even while its own holdoff
// from an earlier HandOff lasts: a hands off to b, b hands straight back
// to a, and a (not c, after b's window) leads next.
func TestHandOffBackToTheFormerLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		const ttl = 2 * time.Second
		a := NewCandidate(c.handle(), "k", "a", ttl)
		runCandidate(t, a)
		eventually(t, "a leads", a.IsLeader)
		b := NewCandidate(c.handle(), "k", "b", ttl)
		runCandidate(t, b)
		cc := NewCandidate(c.handle(), "k", "c", ttl)
		runCandidate(t, cc)
		eventually(t, "b and c see a", func() bool { return b.leader() == "a" && cc.leader() == "a" })
		if err := a.HandOff(ctxT(t), "b"); err != nil {
			t.Fatal(err)
		}
		eventually(t, "b leads", b.IsLeader)
		start := time.Now()
		if err := b.HandOff(ctxT(t), "a"); err != nil {
			t.Fatalf("hand back to a: %v after %v (a leads %v, c leads %v)", err, time.Since(start), a.IsLeader(), cc.IsLeader())
		}
	})
}
