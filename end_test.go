package leadership

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/memory"
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

// endOnSecondRead is a memory handle whose second Get ends the election
// just after it read the key: the reply shows the key as it was before
// the end, and the ended record's watch event is already waiting when the
// reply arrives.
type endOnSecondRead struct {
	*memory.Store
	gets atomic.Int32
}

func (s *endOnSecondRead) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	p, err := s.Store.Get(ctx, key, opts)
	if s.gets.Add(1) == 2 {
		if err := EndElection(ctx, s.Store, key); err != nil {
			return nil, err
		}
	}
	return p, err
}

// A candidate on a missing key that learns of the election's end from a
// watch event it takes just before acquiring (the read before it showed
// the key missing) stops: it does not write its term over the ended
// record, which would hide the end from everyone (seen with EndElection
// right after RunForElection, the example of EndElection).
func TestEndSeenJustBeforeAcquiring(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := &endOnSecondRead{Store: c.handle()}
		cand := NewCandidate(h, "k", "a", time.Second)
		_, errs, err := cand.RunForElection()
		if err != nil {
			t.Fatal(err)
		}
		defer cand.Stop()
		recvUntil(t, errs, "the end", func(err error) bool { return errors.Is(err, ErrElectionEnded) })
		if n := h.gets.Load(); n < 2 {
			t.Fatalf("the election ended after %d reads, not during the second", n)
		}
		p, err := c.handle().Get(ctxT(t), "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := decodeRecord(p.Value); !ok || !r.Ended {
			t.Fatalf("the record is no longer the ended one: %s", p.Value)
		}
	})
}
