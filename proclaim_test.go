package leadership

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
)

// A leader's value reaches followers without a new term; a new value
// replaces it, and the next term of the same candidate carries it too.
func TestProclaimReachesFollowers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		w := c.follow("proclaim")
		a := NewCandidate(c.handle(), "proclaim", "a", time.Second, WithValue("10.0.0.1:8080"))
		t.Cleanup(a.Stop)
		term, err := a.awaitTerm(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		obs := w.Status()
		recvUntil(t, obs, "the first value", func(o Status) bool {
			return o.Leader == "a" && o.Value == "10.0.0.1:8080" && o.Token == term.Token
		})
		if err := a.Proclaim(ctxT(t), "10.0.0.2:8080"); err != nil {
			t.Fatal(err)
		}
		got := recvUntil(t, obs, "the new value", func(o Status) bool { return o.Value == "10.0.0.2:8080" })
		if got.Token != term.Token || got.Leader != "a" {
			t.Fatalf("the new value came with %+v; want the same term %d", got, term.Token)
		}
		if now, ok := a.CurrentTerm(); !ok || now.Token != term.Token {
			t.Fatal("Proclaim started a new term")
		}
		if cur := w.Current(); cur.Value != "10.0.0.2:8080" {
			t.Fatalf("Current() = %+v", cur)
		}
		a.Resign()
		recvUntil(t, obs, "no leader, no value", func(o Status) bool { return o.Leader == "" && o.Value == "" })
		recvUntil(t, obs, "a again, with its value", func(o Status) bool {
			return o.Leader == "a" && o.Token > term.Token && o.Value == "10.0.0.2:8080"
		})
	})
}

// Proclaim refuses a value too large, reports a candidate that does not
// lead, and keeps the value for its next term.
func TestProclaimErrors(t *testing.T) {
	c := newCluster(t)
	l, other := c.leaderAndOther("proclaim", time.Second)
	if err := l.Proclaim(ctxT(t), strings.Repeat("x", MaxValueSize+1)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("too large: %v", err)
	}
	if err := other.Proclaim(ctxT(t), "kept"); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("not leader: %v", err)
	}
	w := c.follow("proclaim")
	l.Stop()
	recvUntil(t, w.Status(), "the other leads with its kept value", func(o Status) bool {
		return o.Leader == other.name && o.Value == "kept"
	})
	if _, err := checkedCandidate(c.handle(), "k", "a", time.Second, WithValue(strings.Repeat("x", MaxValueSize+1))); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("WithValue too large: %v", err)
	}
	if _, err := checkedFollower(c.handle(), "k", WithValue("x")); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("WithValue on a follower: %v", err)
	}
}

// A leader cut off from the store: Proclaim returns why the term ended,
// or the context's cause.
func TestProclaimWhileCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := c.handle()
		a := NewCandidate(h, "proclaim", "a", time.Second)
		t.Cleanup(a.Stop)
		if _, err := a.awaitTerm(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		memfault.Disconnect(h)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if err := a.Proclaim(ctx, "v1"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("short context: %v", err)
		}
		if err := a.Proclaim(ctxT(t), "v2"); !errors.Is(err, ErrLeaseExpired) {
			t.Fatalf("cut off until the deadline: %v", err)
		}
	})
}
