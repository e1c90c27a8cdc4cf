package leadership

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/store/memory"
)

// A record whose renewals raise Seq by more than one (what store/kubernetes
// makes of a Lease renewed by client-go: Seq is the renewTime) is the next
// write when its watch event says so (SeqJumps): a follower dates it from
// its arrival, and drops the holder 90% of its TTL after the last renewal
// arrived, as for the library's own records. Without the flag, or after a
// read failed (the watch may have missed writes), the follower dates a
// renewal from its previous view of the store, as before: it drops the
// holder a renewal interval earlier. A candidate waiting on any of them
// takes over exactly a TTL after the last renewal arrived.
func TestFollowerDatesJumpingRenewalsFromArrival(t *testing.T) {
	const (
		ttl   = 4445 * time.Millisecond // store/kubernetes's record of a 4s Lease
		every = 500 * time.Millisecond  // a renewal
	)
	for _, tc := range []struct {
		name        string
		jumps, flag bool
		failReads   bool          // the follower's reads fail: events are not live
		drop        time.Duration // after the last renewal
	}{
		{"consecutive Seq", false, false, false, ttl - ttl/10},
		{"jumping Seq, SeqJumps", true, true, false, ttl - ttl/10},
		{"jumping Seq, no SeqJumps", true, false, false, ttl - ttl/10 - every},
		{"jumping Seq, SeqJumps, reads failing", true, true, true, ttl - ttl/10 - every},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				name := simName("jumps")
				raw := openRawKey(t, name)
				seq := uint64(0)
				renew := func() {
					seq++
					if tc.jumps {
						seq = uint64(time.Now().UnixMicro())
					}
					rec := record{Leader: "cg", ID: "lease:cg", Term: 1, Seq: seq, TTLms: ttl.Milliseconds(), SeqJumps: tc.flag}
					raw.put(rec.Stamp())
				}
				renew()
				hb, _ := memory.Open(context.Background(), memory.Config{Name: name})
				defer hb.Close()
				b := NewCandidate(hb, "k", "b", 4*time.Second)
				elected, _, err := b.RunForElection()
				if err != nil {
					t.Fatal(err)
				}
				defer b.Stop()
				hf := newFaultStore(t, name)
				// Retries at fixed times (no jitter), away from the renewals.
				noJitter := func(c *config) { c.jitter = func(time.Duration) time.Duration { return 0 } }
				f := NewFollower(hf, "k", noJitter)
				leaders, _, err := f.FollowElection()
				if err != nil {
					t.Fatal(err)
				}
				defer f.Stop()
				nextNamed(t, leaders, "cg", "first value")
				hf.failGets.Store(tc.failReads)

				// Renewals away from the follower's polls (every 3s from
				// its start), for 6s.
				time.Sleep(every / 2)
				var last time.Time
				for range 13 {
					renew()
					last = time.Now()
					time.Sleep(every)
				}
				nextNamed(t, leaders, "", "after the renewals stopped")
				if got := time.Since(last); got != tc.drop {
					t.Errorf("the follower dropped the holder %v after its last renewal, want exactly %v", got, tc.drop)
				}
				for !<-elected {
				}
				if got := time.Since(last); got != ttl {
					t.Errorf("b took over %v after the last renewal, want exactly the TTL, %v", got, ttl)
				}
			})
		})
	}
}

// EndElection over a record an adapter marked SeqJumps writes a record of
// the library, unmarked.
func TestEndedRecordDropsSeqJumps(t *testing.T) {
	prev := record{Leader: "cg", ID: "lease:cg", Term: 1, Seq: 1 << 50, TTLms: 4445, SeqJumps: true}
	if r := endedRecord(snapshot{kind: snapRecord, rec: prev}); r.SeqJumps || !r.Ended {
		t.Fatalf("ended record %+v", r)
	}
}
