package leadership

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/memfault"
)

// fakeClock is a timeSource that moves only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), timers: map[*fakeTimer]struct{}{}}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) oneShot {
	t := &fakeTimer{c: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// advance moves the clock by d and fires the timers that came due.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !t.at.After(c.now) {
			t.fireLocked()
		}
	}
}

type fakeTimer struct {
	c  *fakeClock
	ch chan time.Time
	at time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, active := t.c.timers[t]
	delete(t.c.timers, t)
	t.drainLocked()
	return active
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, active := t.c.timers[t]
	t.drainLocked()
	t.at = t.c.now.Add(d)
	t.c.timers[t] = struct{}{}
	if d <= 0 {
		t.fireLocked()
	}
	return active
}

func (t *fakeTimer) fireLocked() {
	delete(t.c.timers, t)
	select {
	case t.ch <- t.c.now:
	default:
	}
}

func (t *fakeTimer) drainLocked() {
	select {
	case <-t.ch:
	default:
	}
}

// countingStore counts the compare-and-swaps that succeeded.
type countingStore struct {
	Backend
	puts atomic.Int64
}

func (s *countingStore) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	ok, pair, err := s.Backend.AtomicPut(ctx, key, value, prev, opts)
	if ok {
		s.puts.Add(1)
	}
	return ok, pair, err
}

func TestWithClockNilIsAnOptionError(t *testing.T) {
	c := NewCandidate(newCluster(t).handle(), "k", "a", time.Second, withClock(nil))
	if _, _, err := c.RunForElection(); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("err = %v, want ErrInvalidOption", err)
	}
	f := NewFollower(newCluster(t).handle(), "k", withClock(nil))
	if _, _, err := f.FollowElection(); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("follower err = %v, want ErrInvalidOption", err)
	}
}

// On an injected clock, a leader renews as the clock advances and keeps its
// term over many TTLs, with no real time spent waiting.
func TestLeaderRenewsOnInjectedClock(t *testing.T) {
	clk := newFakeClock()
	s := &countingStore{Backend: newCluster(t).handle()}
	const ttl = time.Minute // an hour of leadership, advanced in renewal steps
	c, _ := electedOnClock(t, s, clk, ttl)
	term, _ := c.CurrentTerm()
	if !term.Began.Equal(clk.Now()) {
		t.Fatalf("term began at %v, want the injected clock's %v", term.Began, clk.Now())
	}
	for range 60 {
		before := s.puts.Load()
		clk.advance(ttl / 3)
		eventually(t, "a renewal", func() bool { return s.puts.Load() > before })
	}
	if now, ok := c.CurrentTerm(); !ok || now.Token != term.Token {
		t.Fatalf("after 20 TTLs: term %+v, %v; want term %d", now, ok, term.Token)
	}
}

// On an injected clock, a leader cut off from its store steps down exactly
// when the clock passes its deadline, and not before.
func TestStepDownOnInjectedClock(t *testing.T) {
	clk := newFakeClock()
	h := newCluster(t).handle()
	const ttl = 10 * time.Second
	c, elected := electedOnClock(t, h, clk, ttl)
	term, _ := c.CurrentTerm()
	memfault.Disconnect(h)
	// The deadline is the acquire's send time + TTL - margin (TTL/10).
	clk.advance(ttl - ttl/10 - time.Millisecond)
	if !c.IsLeader() {
		t.Fatal("stepped down before the deadline")
	}
	clk.advance(time.Millisecond)
	if c.IsLeader() {
		t.Fatal("IsLeader at the deadline")
	}
	termEnds(t, term, "the term's context was not cancelled at the deadline")
	recvUntil(t, elected, "stepped down", func(v bool) bool { return !v })
}

// On an injected clock, a follower names no one once the leader's record
// has gone unrenewed for 90% of its TTL, with no real time spent waiting.
func TestFollowerExpiryOnInjectedClock(t *testing.T) {
	clk := newFakeClock()
	cl := newCluster(t)
	ch := cl.handle()
	const ttl = 10 * time.Second
	electedOnClock(t, ch, clk, ttl)
	f := NewFollower(cl.handle(), "clock", withClock(clk))
	leaders, _, err := f.FollowElection()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	recvUntil(t, leaders, "the follower names a", func(l string) bool { return l == "a" })
	memfault.Disconnect(ch) // the leader vanishes: no more renewals
	clk.advance(ttl - ttl/5 - time.Millisecond)
	if f.Leader() != "a" {
		t.Fatalf("follower dropped the leader before its expiry: %q", f.Leader())
	}
	clk.advance(ttl / 5) // past 90% of the TTL
	recvUntil(t, leaders, "the follower names no one", func(l string) bool { return l == "" })
	if at := f.Current().At; !at.Equal(clk.Now()) {
		t.Fatalf("observation at %v, want the injected clock's %v", at, clk.Now())
	}
}

// electedOnClock runs candidate "a" for key "clock" of s on clk until the
// test ends, and returns it, once elected, with its elected channel.
func electedOnClock(t *testing.T, s Backend, clk timeSource, ttl time.Duration) (*Candidate, <-chan bool) {
	t.Helper()
	c := NewCandidate(s, "clock", "a", ttl, withClock(clk))
	elected, _, err := c.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	recvUntil(t, elected, "elected", func(v bool) bool { return v })
	return c, elected
}

// Periodic calls of two participants started at different moments fall
// on the same slots, at most a slot early; slots under a millisecond are
// not used.
func TestSlotStartAlignsParticipants(t *testing.T) {
	clk := newFakeClock()
	clk.advance(123456789 * time.Nanosecond)
	a := startElapsed(clk)
	clk.advance(7*time.Second + 777*time.Millisecond)
	b := startElapsed(clk)
	const interval = 10 * time.Second
	slot := interval / slotsPerInterval
	for _, due := range []time.Duration{interval, interval + 3*time.Millisecond, 2*interval + slot - 1, 3*interval + slot} {
		at := a.slotStart(due, interval)
		if at > due || due-at >= slot {
			t.Fatalf("due %v: slot start %v, want within a slot before", due, at)
		}
		abs := a.epoch.Add(at)
		// b's axis: the same instant, b's slot start must be itself.
		onB := abs.Sub(b.epoch)
		if got := b.slotStart(onB, interval); got != onB {
			t.Fatalf("due %v: a's slot start is not on b's grid (%v vs %v)", due, got, onB)
		}
	}
	if got := a.slotStart(5*time.Second, 10*time.Millisecond); got != 5*time.Second {
		t.Fatalf("slots under a millisecond: %v, want the due time itself", got)
	}
	if got := a.slotStart(never, interval); got != never {
		t.Fatalf("never moved to %v", got)
	}
}
