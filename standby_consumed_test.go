package leadership

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// Claims consumed by their candidate's own term are never handed a term
// (found by a third review): whatever order the watches tell it in, and
// however many candidates led since.

// coalescingWatch is a handle whose watch of the election key sends only
// the latest state of each burst of changes, d after the burst began: a
// Consul blocking query or a ZooKeeper watch (fire once, read, re-arm)
// does the same with writes that land within one round trip. The Backend
// contract allows it ("dropped"). The claim key's watch is untouched.
type coalescingWatch struct {
	*faultStore
	d time.Duration
}

func (s *coalescingWatch) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	in, err := s.faultStore.Watch(ctx, key, opts)
	if err != nil || strings.HasSuffix(key, ".standby") {
		return in, err
	}
	out := make(chan *store.KVPair)
	go func() {
		defer close(out)
		var latest *store.KVPair
		var timer <-chan time.Time
		for {
			select {
			case p, ok := <-in:
				if !ok {
					return
				}
				latest = p
				if timer == nil {
					timer = time.After(s.d)
				}
			case <-timer:
				timer = nil
				select {
				case out <- latest:
				case <-ctx.Done():
					for range in {
					}
					return
				}
			}
		}
	}()
	return out, nil
}

// The leader that writes a handed term never notes its claimant as a
// holder (releaseUnder ends with wrote, not observe, and the watch event
// of its own write is not adopted: same token as high), so it learns that
// the claim was consumed only if it later adopts a renewal of the
// claimant's. A claimant that resigns right after its term began, on a
// store whose watch sends the latest state of a burst (Consul, ZooKeeper),
// is never seen holding by the leader that handed it the term. That
// leader takes the record back after its holdoff, stops right after its
// own term began (before the claimant's next claim is due), and hands the
// next term to the same claim again: the claimant forgot it when its term
// began (and is in its holdoff), so it waits the record out, a whole TTL,
// with no fault at all.
func TestStandbyHandingLeaderCountsItsClaimantAsHolder(t *testing.T) {
	for _, coalesce := range []bool{false, true} {
		t.Run(map[bool]string{false: "every-event", true: "latest-of-burst"}[coalesce], func(t *testing.T) {
			handingLeaderNeverSightsItsClaimant(t, coalesce)
		})
	}
}

func handingLeaderNeverSightsItsClaimant(t *testing.T, coalesce bool) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second // claims every 1s, holdoff 750ms, request timeout 1s
		name := simName("standby-writer")
		h := newFaultStore(t, name)
		var lh Backend = newFaultStore(t, name)
		if coalesce {
			lh = &coalescingWatch{faultStore: lh.(*faultStore), d: 20 * time.Millisecond}
		}
		l := NewCandidate(lh, "k", "L", ttl, WithStandby())
		runCandidate(t, l)
		leadsSoon(t, l, 0, time.Second)
		time.Sleep(100 * time.Millisecond) // L's claim watch is open

		x := startCandidate(t, newFaultStore(t, name), "X", ttl, WithStandby())
		var xClaim claim
		eventually(t, "X's claim", func() bool { var ok bool; xClaim, ok = standbyClaimOf(t, h, "k"); return ok && xClaim.Name == "X" })
		time.Sleep(10 * time.Millisecond) // L's claim watch delivers it (an event: dated)

		l.Resign() // hands the next term to X's claim
		eventually(t, "X leads", x.IsLeader)
		x.Resign() // right after its term began; the key holds X's own claim: a free release
		eventually(t, "X's free release", func() bool { r := recordOf(t, h, "k"); return r.Free() })
		// L's holdoff ends before X's, and before X's next claim is due.
		lt := leadsSoon(t, l, 0, 2*time.Second)
		l.Stop() // right after its term began
		rec := recordOf(t, h, "k")
		cl, _ := standbyClaimOf(t, h, "k")
		t.Logf("L's second term %d; after L's Stop the record names %q (term %d, claim %q); X's first claim %q; the key holds %s's %q",
			lt.Token, rec.Leader, rec.Term, rec.Claim, xClaim.Nonce, cl.Name, cl.Nonce)
		if c, took := leadsWithin([]*Candidate{x}, ttl/2); c == nil {
			t.Fatalf("no one led for %v after L's Stop (TTL %v): L handed term %d to X's claim %q a second time; X's own term had consumed it, but L, which wrote that term, never saw X hold the record (its watch sent only X's release)",
				took, ttl, rec.Term, rec.Claim)
		}
	})
}

// lateWatch is a handle whose watch of one key delivers each event d after
// the store sent it (another connection, another blocking query: nothing
// orders the events of two watches), while its watch of the other key is
// prompt: the claim key's watch is late, or the election key's when
// recordKey is set.
type lateWatch struct {
	*faultStore
	d         time.Duration
	recordKey bool
}

func (s *lateWatch) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	in, err := s.faultStore.Watch(ctx, key, opts)
	if err != nil || s.d == 0 || strings.HasSuffix(key, ".standby") == s.recordKey {
		return in, err
	}
	out := make(chan *store.KVPair, 64)
	go func() {
		defer close(out)
		for p := range in {
			t := time.NewTimer(s.d)
			select {
			case <-t.C:
				out <- p // buffered: order kept, never blocks for long in these tests
			case <-ctx.Done():
				t.Stop()
				for range in {
				}
				return
			}
		}
	}()
	return out, nil
}

// heldSince compares two clocks' readings taken on two goroutines from two
// watch streams: when the engine saw a candidate hold the record (its
// watch of the election key), and when the claim watcher learned that
// candidate's claim (its watch of the claim key). Nothing orders the
// events of two watches. X writes a claim; L resigns just after and hands
// its term to that claim; Z's election-key watch shows X's term at once,
// its claim-key watch shows X's claim 50ms later, so Z dates the claim
// after its only sightings of X, and takes it for fresh. X resigns right
// after its term began (a free release: the key holds its own claim), Z
// takes the free record and stops right after its term began: Z hands the
// next term to X's consumed claim, which X forgot when its term began
// (and X is in its holdoff). No one leads for a TTL, and the follower
// names X, who does not lead.
func TestStandbyClaimLearnedAfterItsCandidateHeldIsConsumed(t *testing.T) {
	for _, d := range []time.Duration{0, 50 * time.Millisecond} {
		t.Run(fmt.Sprintf("claim-watch-latency-%v", d), func(t *testing.T) { claimLearnedAfterSighting(t, d) })
	}
}

func claimLearnedAfterSighting(t *testing.T, latency time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second // claims every 1s, holdoff 750ms, request timeout 1s
		name := simName("standby-order")
		h := newFaultStore(t, name)
		l := startCandidate(t, newFaultStore(t, name), "L", ttl, WithStandby())
		leadsSoon(t, l, 0, time.Second)
		zh := &lateWatch{faultStore: newFaultStore(t, name), d: latency}
		z := NewCandidate(zh, "k", "Z", ttl, WithStandby())
		runCandidate(t, z)
		eventually(t, "Z's claim", func() bool { cl, ok := standbyClaimOf(t, h, "k"); return ok && cl.Name == "Z" })
		time.Sleep(300 * time.Millisecond)
		x := startCandidate(t, newFaultStore(t, name), "X", ttl, WithStandby())
		var xClaim claim
		eventually(t, "X's claim", func() bool { var ok bool; xClaim, ok = standbyClaimOf(t, h, "k"); return ok && xClaim.Name == "X" })
		_, leaders := runFollower(t, h)

		l.Resign() // hands the next term to X's claim, within Z's claim-watch latency
		eventually(t, "X leads", x.IsLeader)
		time.Sleep(10 * time.Millisecond)
		x.Resign() // the key holds X's own claim: a free release
		zt := leadsSoon(t, z, 0, time.Second)
		time.Sleep(60 * time.Millisecond) // Z's claim watch has shown X's claim
		z.Stop()
		rec := recordOf(t, h, "k")
		t.Logf("Z led term %d; after Z's Stop the record names %q (term %d, claim %q); X's claim %q", zt.Token, rec.Leader, rec.Term, rec.Claim, xClaim.Nonce)
		named := ""
		for len(leaders) > 0 {
			named = <-leaders
		}
		if c, took := leadsWithin([]*Candidate{l, x}, ttl/2); c == nil {
			t.Fatalf("no one led for %v after Z's Stop (TTL %v): Z handed term %d to X's claim %q, which X's own term had consumed (Z saw X hold the record before its claim watch showed the claim); the follower names %q, who does not lead",
				took, ttl, rec.Term, rec.Claim, named)
		}
	})
}

// sawHolder keeps the last 4 holders seen; a fifth evicts the oldest, and
// with it the proof that a claim was consumed. Seven standby candidates:
// L leads, five wait (their claims written first), X claims last. L
// resigns and hands its term to X's claim; X resigns right after its term
// began (a free release: the key holds its own claim); four of the others
// take the free record in turn and resign right after, each release free
// (each saw X hold the record). The fifth takes the free record and stops:
// its ring holds the four that led after X (and X's sighting was the
// oldest), so X's claim, learned less than two intervals ago, looks fresh,
// and the term is handed to X, which forgot that claim and is in its
// holdoff. No one leads for a TTL.
func TestStandbyConsumedClaimOfAnEvictedHolder(t *testing.T) {
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprintf("%d-holders-after-X", n), func(t *testing.T) { holderRingEvictsTheConsumer(t, n) })
	}
}

func holderRingEvictsTheConsumer(t *testing.T, between int) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second // claims every 1s, holdoff 750ms, request timeout 1s
		name := simName("standby-ring")
		h := newFaultStore(t, name)
		l := startCandidate(t, newFaultStore(t, name), "L", ttl, WithStandby())
		leadsSoon(t, l, 0, time.Second)
		var others []*Candidate
		for _, n := range []string{"A", "B", "C", "D", "Z"} {
			others = append(others, startCandidate(t, newFaultStore(t, name), n, ttl, WithStandby()))
		}
		time.Sleep(200 * time.Millisecond) // every one of them has claimed
		x := startCandidate(t, newFaultStore(t, name), "X", ttl, WithStandby())
		var xClaim claim
		eventually(t, "X's claim", func() bool { var ok bool; xClaim, ok = standbyClaimOf(t, h, "k"); return ok && xClaim.Name == "X" })
		time.Sleep(10 * time.Millisecond)

		l.Resign() // hands the next term to X's claim
		eventually(t, "X leads", x.IsLeader)
		x.Resign()
		var order []string
		var last *Candidate
		waiting := others
		for i := range between + 1 {
			c, _ := leadsWithin(waiting, time.Second)
			if c == nil {
				t.Fatalf("no leader after %v", order)
			}
			order = append(order, c.node)
			waiting = slices.DeleteFunc(slices.Clone(waiting), func(w *Candidate) bool { return w == c })
			if i < between {
				c.Resign()
				eventually(t, "a release", func() bool { r := recordOf(t, h, "k"); return r.Leader != c.node })
				if r := recordOf(t, h, "k"); r.Claim != "" {
					t.Fatalf("%s's release handed term %d to %s's claim", c.node, r.Term, r.Leader)
				}
			} else {
				last = c
			}
		}
		last.Stop()
		rec := recordOf(t, h, "k")
		cl, _ := standbyClaimOf(t, h, "k")
		t.Logf("led after X: %v; after %s's Stop the record names %q (term %d, claim %q); X's claim %q; the key holds %s's",
			order, last.node, rec.Leader, rec.Term, rec.Claim, xClaim.Nonce, cl.Name)
		if c, took := leadsWithin(append([]*Candidate{l, x}, others...), ttl/2); c == nil {
			t.Fatalf("no one led for %v after %s's Stop (TTL %v): it handed term %d to X's claim %q, consumed by X's term, whose sighting the %d holders after X evicted from its ring of %d",
				took, last.node, ttl, rec.Term, rec.Claim, between, sentClaims)
		}
	})
}
