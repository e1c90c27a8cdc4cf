package leadership

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/memfault"
)

// Regression tests for the fencing holes of issue 23 (3, 4, 6 and 8), each
// exact under testing/synctest on the memory store.

// absentKey fails the test if key exists in the backend behind h.
func absentKey(t *testing.T, h Backend, key string) {
	t.Helper()
	if p, err := h.Get(context.Background(), key, nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("%s holds %q (%v): a refused write was stored", key, p.Value, err)
	}
}

// Hole 3. a leads term 1, its guard the record at index i, and is paused
// (its clock stands still, so its term never ends on its own; it sees
// nothing of the store). The store loses its data and its index restarts;
// b, who lived through the loss, waits a out and takes term 2 at the same
// index i. a resumes and writes through term 1: the record at i is not
// the one a guarded, and the store must refuse.
func TestFencedPutRefusedOverRecordAtReusedIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 2 * time.Second
		name := simName("fence-reuse")
		ha, hb := newFaultStore(t, name), newFaultStore(t, name)
		a := NewCandidate(ha, "k", "a", ttl, withClock(newFakeClock()))
		runCandidate(t, a)
		term := leadsSoon(t, a, 0, time.Second)
		b := startCandidate(t, hb, "b", ttl, WithTimings(Timings{RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond}))
		synctest.Wait() // b has read a's record

		ha.failGets.Store(true) // a is paused: it learns nothing more
		ha.watchDelay.Store(int64(time.Hour))
		memfault.LoseData(name)
		bt := leadsSoon(t, b, term.Token, 3*ttl)

		guard, _, ok := a.values.lastWrite(term.Token)
		now, err := hb.Get(context.Background(), "k", nil)
		if !ok || err != nil || now.LastIndex != guard.LastIndex {
			t.Fatalf("setup: a's guard %v (%v), b's record %v (%v): want the same index", guard, ok, now, err)
		}
		if term.Context().Err() != nil {
			t.Fatal("setup: a's term ended; a must still believe it leads")
		}
		ha.failGets.Store(false) // a resumes
		err = a.FencedPut(context.Background(), term, "data", []byte("stale"))
		if !errors.Is(err, ErrFenced) {
			t.Fatalf("a's write through term %d over b's term %d at the same index: %v, want ErrFenced", term.Token, bt.Token, err)
		}
		absentKey(t, hb, "data")
	})
}

// Hole 4. The ended record of DeleteElection is written at index i; b and
// c are blind to it (their reads fail, their events are late). The store
// loses its data; b, who lived through the loss, takes term 2 at the
// reused index i and is cut off. The delete of "its" index i must not
// remove b's record: c, blind until then, would find the key missing and
// take term 2 too.
func TestDeleteElectionSparesRecordAtReusedIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 2 * time.Second
		name := simName("delete-reuse")
		ha, hb, hc := newFaultStore(t, name), newFaultStore(t, name), newFaultStore(t, name)
		raw := openRawKey(t, name)
		fast := WithTimings(Timings{RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond})
		leaderA(t, ha, ttl)
		b := startCandidate(t, hb, "b", ttl, fast)
		c := startCandidate(t, hc, "c", ttl, fast)
		synctest.Wait() // b and c have read a's record
		for _, h := range []*faultStore{hb, hc} {
			h.failGets.Store(true)
			h.watchDelay.Store(int64(time.Hour))
		}

		deleted := make(chan error, 1)
		go func() { deleted <- DeleteElection(context.Background(), raw.h, "k") }()
		synctest.Wait() // the ended record is written; a saw it; the delete waits
		ended, err := raw.h.Get(context.Background(), "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now()
		hb.failGets.Store(false) // b lives through the loss
		memfault.LoseData(name)
		for range ended.LastIndex - 1 { // the index restarts: b's write gets i
			if err := raw.h.Put(context.Background(), "pad", []byte("x"), nil); err != nil {
				t.Fatal(err)
			}
		}
		bt := leadsSoon(t, b, 0, 3*ttl)
		memfault.Disconnect(hb.Store) // b leads until its deadline
		if now, err := raw.h.Get(context.Background(), "k", nil); err != nil || now.LastIndex != ended.LastIndex {
			t.Fatalf("setup: b's record %v (%v), want index %d", now, err, ended.LastIndex)
		}
		if !time.Now().Before(end.Add(endNotice)) {
			t.Fatal("setup: b led only after the delete")
		}

		time.Sleep(time.Until(end.Add(endNotice + time.Millisecond)))
		hc.failGets.Store(false) // c sees the key from now on
		deadline := time.Now().Add(4 * ttl)
		for time.Now().Before(deadline) {
			if ct, ok := c.CurrentTerm(); ok && ct.Token <= bt.Token {
				t.Fatalf("c leads term %d after b led term %d: the delete removed b's record", ct.Token, bt.Token)
			}
			if c.Err() != nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if !errors.Is(c.Err(), ErrElectionEnded) {
			t.Fatalf("c: %v, want ErrElectionEnded (the delete ends b's election in turn)", c.Err())
		}
		if err := <-deleted; err != nil {
			t.Fatalf("DeleteElection: %v", err)
		}
	})
}

// Hole 6. Right after Resign returns, before the release reached the store
// (here it hangs), a write through the resigned term is refused locally.
func TestFencedPutRefusedOnceTermEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 2 * time.Second
		name := simName("fence-resigned")
		ha := newFaultStore(t, name)
		a, term := leaderA(t, ha, ttl)
		ha.hangPuts.Store(true) // the release does not reach the store
		a.Resign()
		<-term.Context().Done()
		err := a.FencedPut(context.Background(), term, "data", []byte("late"))
		if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), fmt.Sprintf("term %d", term.Token)) {
			t.Fatalf("a write through the resigned term %d: %v, want ErrFenced naming the term", term.Token, err)
		}
		absentKey(t, ha, "data")
		ha.release()
	})
}

// Hole 8. A fenced write to the election's own key is refused before it
// reaches the store: it would overwrite the record.
func TestFencedPutRefusesElectionKey(t *testing.T) {
	c := newCluster(t)
	h := c.handle()
	a := leading(t, c, "fence", "a")
	term, _ := a.CurrentTerm()
	before := recordOf(t, h, "fence")
	for _, key := range []string{"fence", "/fence/", "fence/"} {
		if err := a.FencedPut(ctxT(t), term, key, []byte("x")); !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("FencedPut(%q): %v, want ErrInvalidOption", key, err)
		}
	}
	if now := recordOf(t, h, "fence"); now.Term != before.Term || now.Leader != "a" {
		t.Fatalf("the record changed: %+v, was %+v", now, before)
	}
	if cur, ok := a.CurrentTerm(); !ok || cur.Token != term.Token {
		t.Fatal("a lost its term")
	}
}

// Once the engine has seen the store go back in time since the last
// confirmed write of the term, no fenced write goes through that write's
// guard: its index may have been handed out again.
func TestFencedPutRefusedAfterStoreWentBack(t *testing.T) {
	c := newCluster(t)
	a := NewCandidate(c.handle(), "fence", "a", time.Second, withClock(newFakeClock())) // no renewal comes between
	t.Cleanup(a.Stop)
	term, err := a.awaitTerm(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	a.values.storeWentBack()
	if err := a.FencedPut(ctxT(t), term, "fence/data", []byte("x")); !errors.Is(err, ErrFenced) {
		t.Fatalf("after the store went back: %v, want ErrFenced", err)
	}
	absentKey(t, c.handle(), "fence/data")
}
