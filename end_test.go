package leadership

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
)

func TestEndElectionTellsEveryone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		rs := c.campaign("end", time.Second, 3)
		f := c.follow("end")
		leaders, ferrs := f.leaders, f.errs
		l := leaderOf(t, rs)
		term, _ := l.CurrentTerm()
		recvUntil(t, leaders, "leader", func(s string) bool { return s == l.name })

		if err := EndElection(ctxT(t), l.client, l.key); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			recvUntil(t, r.errs, r.name+" told", func(err error) bool { return errors.Is(err, ErrElectionEnded) })
			closed(t, r.errs, r.name+" errors")
			closed(t, r.elected, r.name+" elected")
			if !errors.Is(r.Err(), ErrElectionEnded) {
				t.Fatalf("%s Err() = %v", r.name, r.Err())
			}
			if r.IsLeader() {
				t.Fatalf("%s still leads", r.name)
			}
		}
		select {
		case <-term.Context().Done():
		default:
			t.Fatal("the leader's term context survived the end")
		}
		recvUntil(t, ferrs, "follower told", func(err error) bool { return errors.Is(err, ErrElectionEnded) })
		closed(t, leaders, "follower's leader channel")
		if !errors.Is(f.Err(), ErrElectionEnded) {
			t.Fatalf("follower Err() = %v", f.Err())
		}

		// A candidate that starts afterwards opens a new election on the key,
		// with tokens that keep growing.
		n := c.campaign("end", time.Second, 1)[0]
		recvUntil(t, n.elected, "new election", func(v bool) bool { return v })
		tokenAbove(t, n, term, "the term after the end")
	})
}

func TestDeleteElection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := c.handle()
		rs := c.campaign("del", 300*time.Millisecond, 2)
		leaderOf(t, rs)
		if err := DeleteElection(ctxT(t), h, "del"); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			recvUntil(t, r.errs, r.name+" told", func(err error) bool { return errors.Is(err, ErrElectionEnded) })
		}
		if _, err := h.Get(context.Background(), "del", nil); err == nil {
			t.Fatal("key still exists after DeleteElection")
		}
	})
}

func TestEndElectionBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		if err := EndElection(context.Background(), nil, "k"); !errors.Is(err, ErrNilStore) {
			t.Fatalf("nil store: %v", err)
		}
		if err := EndElection(context.Background(), c.handle(), "//"); !errors.Is(err, ErrEmptyKey) {
			t.Fatalf("empty key: %v", err)
		}
		h := c.handle()
		memfault.Disconnect(h)
		if err := EndElection(context.Background(), h, "k"); !errors.Is(err, ErrStore) {
			t.Fatalf("unreachable: %v", err)
		}
	})
}

// A candidate that opens a new election while DeleteElection waits must not
// have its record deleted under it.
func TestDeleteElectionSparesAReopenedElection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := c.handle()
		done := make(chan error, 1)
		go func() { done <- DeleteElection(ctxT(t), h, "reopen") }() // no one led: ends, then deletes
		eventually(t, "the election ended", func() bool {
			p, err := h.Get(context.Background(), "reopen", nil)
			return err == nil && snapshotOf(p).rec.Ended
		})
		n := c.campaign("reopen", 300*time.Millisecond, 1)[0] // reopens it
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// n joined before the end or reopened the ended election, so it was
		// ended (and told), or it created a fresh election after the deletion
		// (and leads it).
		// Never a deleted record under a live leader.
		eventually(t, "n leads or is told of the end", func() bool {
			return n.IsLeader() || errors.Is(n.Err(), ErrElectionEnded)
		})
		if n.IsLeader() {
			if _, err := h.Get(context.Background(), "reopen", nil); err != nil {
				t.Fatalf("n leads but its record is gone: %v", err)
			}
		}
	})
}
