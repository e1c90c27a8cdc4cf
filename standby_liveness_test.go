package leadership

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/memory"
)

// Standby handoffs that must not cost a TTL: a claim consumed, left behind
// or of unknown age is never handed the term. Each schedule is exact under
// testing/synctest on the memory store.

// leadsWithin reports whether one of cs leads within d (bubble time).
func leadsWithin(cs []*Candidate, d time.Duration) (*Candidate, time.Duration) {
	began := time.Now()
	for time.Since(began) < d {
		for _, c := range cs {
			if c.IsLeader() {
				return c, time.Since(began)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil, d
}

// Found by review, and fixed: A claim that its candidate's own term consumed is handed back to it,
// which never takes it (forget, and the resign holdoff): no one leads for
// a whole TTL, in normal operation, and followers name a candidate that
// does not lead. L resigns and hands its term to X's claim; X resigns at
// once (its own claim is still the latest: a free release); Z, not in a
// holdoff, takes the free record by a write, then stops: its claim
// watcher still knows X's claim, learned by an event less than two
// intervals ago, so Z's release writes the next term for X. X forgot that
// claim when its term began (and is in its holdoff): it waits the record
// out, and so does L.
func TestStandbyConsumedClaimIsNotHandedBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second // claims every 1s, holdoff 750ms
		name := simName("standby-consumed")
		h := newFaultStore(t, name)
		l := startCandidate(t, newFaultStore(t, name), "L", ttl, WithStandby())
		leadsSoon(t, l, 0, time.Second)
		z := startCandidate(t, newFaultStore(t, name), "Z", ttl, WithStandby())
		eventually(t, "Z's claim", func() bool { cl, ok := standbyClaimOf(t, h, "k"); return ok && cl.Name == "Z" })
		time.Sleep(100 * time.Millisecond)
		x := startCandidate(t, newFaultStore(t, name), "X", ttl, WithStandby())
		var xClaim claim
		eventually(t, "X's claim", func() bool { var ok bool; xClaim, ok = standbyClaimOf(t, h, "k"); return ok && xClaim.Name == "X" })
		_, leaders := runFollower(t, h)
		time.Sleep(20 * time.Millisecond)

		l.Resign() // hands the next term to X's claim
		leadsSoon(t, x, 0, time.Second)
		x.Resign() // the latest claim is X's own: a free release
		leadsSoon(t, z, 0, time.Second)
		z.Stop()
		rec := recordOf(t, h, "k")
		t.Logf("record after Z's Stop: leader %q term %d claim %q (X's claim consumed by its own term: %q)", rec.Leader, rec.Term, rec.Claim, xClaim.Nonce)
		named := ""
		for len(leaders) > 0 {
			named = <-leaders
		}
		if c, took := leadsWithin([]*Candidate{l, x}, ttl/2); c == nil {
			t.Fatalf("no one led for %v after Z's Stop (TTL %v): Z handed term %d to X's claim %q, which X's own term had consumed; the follower names %q, who does not lead",
				took, ttl, rec.Term, rec.Claim, named)
		}
	})
}

// claimLandsOnStop is a handle whose armed compare-and-swap of the claim
// key lands, and whose reply is lost when the caller's context ends (as a
// client's call cancelled in flight: the server applied it).
type claimLandsOnStop struct {
	*faultStore
	armed  atomic.Bool
	landed chan struct{}
}

func (s *claimLandsOnStop) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if !strings.HasSuffix(key, ".standby") || !s.armed.Load() {
		return s.faultStore.AtomicPut(ctx, key, value, prev, opts)
	}
	ok, p, err := s.Store.AtomicPut(context.Background(), key, value, prev, opts)
	if err != nil || !ok {
		return ok, p, err
	}
	s.armed.Store(false)
	close(s.landed)
	<-ctx.Done()
	return false, nil, ctx.Err()
}

// Found by review, and fixed: A Stop that comes while a claim write is in flight: the write lands,
// its outcome is unknown to the candidate, and withdrawClaim deletes only
// over the pair of the previous claim (or, after a first claim, does
// nothing): the claim stays. The leader's Stop then hands its term to the
// stopped candidate, and the last candidate waits a whole TTL.
func TestStandbyStopDuringClaimWriteWithdrawsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second // claims every 1s
		name := simName("standby-inflight")
		h := newFaultStore(t, name)
		l := startCandidate(t, newFaultStore(t, name), "L", ttl, WithStandby())
		leadsSoon(t, l, 0, time.Second)
		last := startCandidate(t, newFaultStore(t, name), "last", ttl) // no standby: never claims
		bh := &claimLandsOnStop{faultStore: newFaultStore(t, name), landed: make(chan struct{})}
		b := NewCandidate(bh, "k", "B", ttl, WithStandby())
		runCandidate(t, b)
		var first claim
		eventually(t, "B's claim", func() bool { var ok bool; first, ok = standbyClaimOf(t, h, "k"); return ok && first.Name == "B" })
		bh.armed.Store(true)
		<-bh.landed // B's next claim landed; its reply is still out
		b.Stop()
		cl, ok := standbyClaimOf(t, h, "k")
		if !ok || cl.Name != "B" {
			t.Logf("B's claim withdrawn")
			return
		}
		time.Sleep(20 * time.Millisecond)
		l.Stop()
		rec := recordOf(t, h, "k")
		if c, took := leadsWithin([]*Candidate{last}, ttl/2); c == nil {
			t.Fatalf("B's claim %q (its first: %q) is left after B's Stop; L's Stop handed term %d to it (record leader %q claim %q), and the last candidate did not lead within %v (TTL %v)",
				cl.Nonce, first.Nonce, rec.Term, rec.Leader, rec.Claim, took, ttl)
		}
	})
}

// Found by review, and fixed: withdrawClaim skips the withdrawal when the claim watch learned
// another claim after this candidate's last claim was sent. Learned after
// the send is not written after the landing: C's claim landed just before
// B's (B's compare-and-swap conflicted with it, B read it and wrote over
// it), and its event reached B's watch after B sent its claim and before
// the event of B's own. B stops in between: the skip leaves B's claim,
// the latest, in the key, and L's Stop hands its term to the stopped B.
// The window is as wide as the claim watch's event latency (300ms here).
func TestStandbyWithdrawalNotSkippedOnAnEarlierClaimLearnedLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second // claims every 1s
		name := simName("standby-withdraw")
		h := newFaultStore(t, name)
		l := startCandidate(t, newFaultStore(t, name), "L", ttl, WithStandby())
		leadsSoon(t, l, 0, time.Second)
		bh := newFaultStore(t, name)
		bh.watchDelay.Store(int64(300 * time.Millisecond)) // values late, as a slow watch
		b := startCandidate(t, bh, "B", ttl, WithStandby())
		eventually(t, "B's claim", func() bool { cl, ok := standbyClaimOf(t, h, "k"); return ok && cl.Name == "B" })
		b0 := time.Now()
		time.Sleep(time.Second - 200*time.Millisecond)
		cand := startCandidate(t, newFaultStore(t, name), "C", ttl, WithStandby())
		eventually(t, "C's claim", func() bool { cl, ok := standbyClaimOf(t, h, "k"); return ok && cl.Name == "C" })
		eventually(t, "B's next claim", func() bool { cl, ok := standbyClaimOf(t, h, "k"); return ok && cl.Name == "B" })
		time.Sleep(time.Until(b0.Add(time.Second + 150*time.Millisecond)))
		b.Stop()
		cl, ok := standbyClaimOf(t, h, "k")
		if !ok || cl.Name != "B" {
			t.Logf("B's claim withdrawn")
			return
		}
		l.Stop()
		rec := recordOf(t, h, "k")
		if c, took := leadsWithin([]*Candidate{cand}, ttl/2); c == nil {
			t.Fatalf("B's claim %q is left after B's Stop (withdrawal skipped: B's watch had learned C's earlier claim after B sent its own); L's Stop handed term %d to %q, and C did not lead within %v (TTL %v)",
				cl.Nonce, rec.Term, rec.Leader, took, ttl)
		}
	})
}

// silentClaimWatch is a handle whose watch of the claim key never sends
// (the Backend contract: "a channel that never sends is fine").
type silentClaimWatch struct{ *faultStore }

func (s *silentClaimWatch) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	if !strings.HasSuffix(key, ".standby") {
		return s.faultStore.Watch(ctx, key, opts)
	}
	ch := make(chan *store.KVPair)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch, nil
}

// Found by review, and fixed: "A cached claim not written again for two of its claimant's intervals
// is not used, nor one whose age is unknown": the fallback read of
// standbyClaim uses any claim that differs from the state the watch last
// told, however long ago the watch told it. On a watch that sends nothing
// (or a watch of changes only, for a claim written between the watcher's
// read and its open) a claim of a candidate that vanished long ago is
// handed the term, and the last candidate waits a TTL.
func TestStandbyFallbackReadIgnoresClaimOfUnknownAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 500 * time.Millisecond // claims every 166ms
		name := simName("standby-fallback")
		h := newFaultStore(t, name)
		lh := &silentClaimWatch{newFaultStore(t, name)}
		l := NewCandidate(lh, "k", "L", ttl, WithStandby())
		runCandidate(t, l)
		leadsSoon(t, l, 0, time.Second)
		time.Sleep(50 * time.Millisecond) // L's claim watch read the key (none) and opened
		gone := newFaultStore(t, name)
		startCandidate(t, gone, "ghost", ttl, WithStandby())
		var cl claim
		eventually(t, "the ghost's claim", func() bool { var ok bool; cl, ok = standbyClaimOf(t, h, "k"); return ok && cl.Name == "ghost" })
		gone.Disconnect()
		vanished := time.Now()
		time.Sleep(10 * cl.Every())
		last := startCandidate(t, newFaultStore(t, name), "last", ttl) // no standby
		l.Stop()
		rec := recordOf(t, h, "k")
		if c, took := leadsWithin([]*Candidate{last}, ttl/2); c == nil {
			t.Fatalf("L's Stop handed term %d to %q for a claim last written %v before (its interval %v), read by the fallback read; the last candidate did not lead within %v (TTL %v)",
				rec.Term, rec.Leader, time.Since(vanished).Round(time.Millisecond), cl.Every(), took, ttl)
		}
	})
}

// failingGets fails every Get: RunForElection's first read fails.
type failingGets struct{ *memory.Store }

func (s failingGets) Get(context.Context, string, *store.ReadOptions) (*store.KVPair, error) {
	return nil, store.ErrNotReachable
}

// Regression: the claim watcher, now started for every standby candidate
// at the run's start, ends with the run in every way it can end: a failed
// start (never started), Stop while waiting, the election ended, and a
// cancelled context before the first term.
func TestStandbyClaimWatcherAlwaysStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = time.Second
		name := simName("standby-leaks")
		h := newFaultStore(t, name)

		bad := NewCandidate(failingGets{h.Store}, "k", "bad", ttl, WithStandby())
		if _, _, err := bad.RunForElection(); err == nil || !errors.Is(err, ErrStore) && !errors.Is(err, store.ErrNotReachable) {
			t.Fatalf("RunForElection on a failing store: %v", err)
		}

		l := startCandidate(t, newFaultStore(t, name), "L", ttl, WithStandby())
		leadsSoon(t, l, 0, time.Second)
		w := NewCandidate(newFaultStore(t, name), "k", "W", ttl, WithStandby())
		runCandidate(t, w)
		ctx, cancel := context.WithCancel(context.Background())
		cc := NewCandidate(newFaultStore(t, name), "k", "ctx", ttl, WithStandby())
		if _, _, err := cc.RunForElectionContext(ctx); err != nil {
			t.Fatal(err)
		}
		e := NewCandidate(newFaultStore(t, name), "k", "E", ttl, WithStandby())
		runCandidate(t, e)
		time.Sleep(2 * ttl)
		w.Stop()
		cancel()
		<-cc.Done()
		if err := EndElection(ctxT(t), h, "k"); err != nil {
			t.Fatal(err)
		}
		<-e.Done()
		<-l.Done()
		// synctest.Test fails if any goroutine of the bubble is left.
	})
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}
