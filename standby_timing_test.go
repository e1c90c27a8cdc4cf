package leadership

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// Standby's timing (found by a fourth review): the withdrawal of a consumed
// claim never holds the engine past a renewal, and a claim is judged
// consumed by terms, never by the order of two watches.

// slowRecordWrites is a handle whose compare-and-swaps of the election
// key answer putDelay late (applied then; a call whose context ends first
// is not applied), and whose compare-and-delete of the claim key, once
// hangDelete is set, answers only when its context ends (a claim key that
// hangs).
type slowRecordWrites struct {
	*faultStore
	putDelay   atomic.Int64
	hangDelete atomic.Bool
}

func (s *slowRecordWrites) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if d := time.Duration(s.putDelay.Load()); d > 0 && !strings.HasSuffix(key, ".standby") {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, nil, ctx.Err()
		}
	}
	return s.faultStore.AtomicPut(ctx, key, value, prev, opts)
}

func (s *slowRecordWrites) AtomicDelete(ctx context.Context, key string, prev *store.KVPair) (bool, error) {
	if s.hangDelete.Load() && strings.HasSuffix(key, ".standby") {
		<-ctx.Done()
		return false, ctx.Err()
	}
	return s.faultStore.AtomicDelete(ctx, key, prev)
}

// The withdrawal in stepHolding runs once nothing is due, with a quarter
// of the request timeout, however soon the next renewal is due: a
// renewal that falls due meanwhile waits for it. TTL 3s (renew every 1s,
// deadline 2.7s after a confirmed send), WithRequestTimeout(5s): the
// withdrawal may take 1.25s. The store answers writes of the record in
// 950ms. A takes a handed term and renews at once (sent s, answered
// s+0.95s, next due s+1s); the withdrawal starts at s+0.95s. With a
// prompt claim key the next renewal is sent at s+1s and confirmed at
// s+1.95s, well within the deadline s+2.7s, and so on every interval.
// With a claim key that hangs, the withdrawal holds the engine until
// s+2.2s, the renewal sent then is answered at s+3.15s, after the
// deadline: the lease ends, for nothing but the withdrawal of a claim.
func TestStandbyWithdrawalNeverDelaysARenewalPastTheDeadline(t *testing.T) {
	for _, hang := range []bool{false, true} {
		t.Run(map[bool]string{false: "claim-delete-prompt", true: "claim-delete-hangs"}[hang], func(t *testing.T) {
			withdrawalBeforeARenewal(t, hang)
		})
	}
}

func withdrawalBeforeARenewal(t *testing.T, hang bool) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("standby-withdraw-budget")
		h := newFaultStore(t, name)
		l := startCandidate(t, newFaultStore(t, name), "L", ttl, WithStandby())
		leadsSoon(t, l, 0, time.Second)
		ah := &slowRecordWrites{faultStore: newFaultStore(t, name)}
		a := NewCandidate(ah, "k", "A", ttl, WithStandby(), WithRequestTimeout(5*time.Second))
		runCandidate(t, a)
		eventually(t, "A's claim", func() bool { cl, ok := standbyClaimOf(t, h, "k"); return ok && cl.Name == "A" })
		time.Sleep(20 * time.Millisecond)
		ah.putDelay.Store(int64(950 * time.Millisecond))
		ah.hangDelete.Store(hang)

		l.Resign() // hands the next term to A's claim
		term := leadsSoon(t, a, 0, time.Second)
		span := spanOf(term)
		select {
		case <-span.done:
			t.Fatalf("A's term %d ended %v after it began, unresigned and unstopped: its first renewal was answered in 950ms, the withdrawal of its claim (claim key hangs: %v) held the engine for up to a quarter of the request timeout (1.25s) past the next renewal's due time, and that renewal came back after the lease's deadline (TTL %v, renew every %v)",
				term.Token, span.end.Sub(span.began), hang, ttl, ttl/3)
		case <-time.After(3 * ttl):
			t.Logf("A still leads term %d after %v", term.Token, 3*ttl)
		}
	})
}

// A clock rule for consumed claims (a sighting at or after the moment the
// claim was learned) would compare readings of two goroutines fed by two
// watches:
// the engine's handling of an election-key event, and the claim watcher's
// learning of a claim. X leads term 1 (resign holdoff 0); L waits with
// its claim. X renews; L's election-key watch delivers that renewal late
// (d). X resigns at once and hands term 2 to L's claim, and claims at
// once, under term 2 (its claim's Term is 2, above X's only term 1: not
// consumed). L's claim watcher learns X's claim promptly; L's engine then
// adopts X's late renewal and notes X as holder, dated after the claim
// was learned, and takes its handed term 2. L stops within one of X's
// intervals: its release would find X's fresh claim "consumed" by such a
// rule and free the record, X then needing a write of its own. Judged by
// terms, the release hands term 3 to X, whatever d.
func TestStandbyFreshClaimLearnedBeforeALateSightingIsHandedOn(t *testing.T) {
	for _, d := range []time.Duration{0, 100 * time.Millisecond} {
		t.Run(fmt.Sprintf("record-watch-latency-%v", d), func(t *testing.T) { freshClaimLateSighting(t, d) })
	}
}

func freshClaimLateSighting(t *testing.T, d time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second // claims every 1s, request timeout 1s
		name := simName("standby-late-sighting")
		h := newFaultStore(t, name)
		xh := newFaultStore(t, name)
		x := startCandidate(t, xh, "X", ttl, WithStandby(), WithResignHoldoff(0))
		leadsSoon(t, x, 0, time.Second)
		lh := &lateWatch{faultStore: newFaultStore(t, name), d: d, recordKey: true}
		l := NewCandidate(lh, "k", "L", ttl, WithStandby())
		runCandidate(t, l)
		eventually(t, "L's claim", func() bool { cl, ok := standbyClaimOf(t, h, "k"); return ok && cl.Name == "L" })
		time.Sleep(1500 * time.Millisecond) // L has seen X renew; X's claim watch knows L's claim

		xh.awaitWrite() // a renewal of X's, which L's engine sees d later
		time.Sleep(10 * time.Millisecond)
		x.Resign() // hands term 2 to L's claim; X claims at once
		var xClaim claim
		eventually(t, "X's claim", func() bool { var ok bool; xClaim, ok = standbyClaimOf(t, h, "k"); return ok && xClaim.Name == "X" })
		lt := leadsSoon(t, l, 0, time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.Sleep(50 * time.Millisecond)
		if cl, _ := standbyClaimOf(t, h, "k"); cl.Nonce != xClaim.Nonce {
			t.Fatalf("X claimed again (%q after %q): the schedule is off", cl.Nonce, xClaim.Nonce)
		}
		// Every record written from now on (X renews a handed term at once,
		// which clears its claim field).
		var mu sync.Mutex
		var seen []record
		ch, err := h.Store.Watch(ctx, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for p := range ch {
				if p == nil {
					continue
				}
				if r, ok := decodeRecord(p.Value); ok {
					mu.Lock()
					seen = append(seen, r)
					mu.Unlock()
				}
			}
		}()
		time.Sleep(time.Millisecond)
		l.Stop()
		time.Sleep(50 * time.Millisecond)
		cancel()
		mu.Lock()
		defer mu.Unlock()
		var release *record
		for i := range seen {
			if seen[i].Term > lt.Token && (release == nil || seen[i].Term < release.Term) {
				release = &seen[i]
			}
		}
		if release == nil || release.Claim != xClaim.Nonce || release.Leader != "X" {
			t.Fatalf("L's Stop did not hand the next term to X's claim %q, written under term %d after X's only term 1 ended (the term rule: not consumed); its release freed the record (records seen after it: %+v): L's engine noted X as holder when it handled X's last renewal, delivered %v late, after its claim watcher had learned X's claim, and the clock rule of consumedBy took that for consumption",
				xClaim.Nonce, xClaim.Term, seen, d)
		}
		t.Logf("L's Stop handed term %d to X's claim %q", release.Term, release.Claim)
	})
}
