package leadership

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
)

// Regression tests for the schedules of the safety issue, each exact under
// testing/synctest on the memory store. The simulator drives the same
// faults at random; these pin each one down by name.

// 1. Something stores the record again with identical bytes (a sync tool, a
// re-created node): the leader keeps its term, with no storm of calls.
func TestIdenticalRewriteDoesNotLivelock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("rewrite")
		ha, hb := newFaultStore(t, name), newFaultStore(t, name)
		a, term := leaderA(t, ha, ttl)
		span := spanOf(term)
		startCandidate(t, hb, "b", ttl)

		other := openRawKey(t, name)
		for range 5 {
			time.Sleep(ttl / 2)
			other.put(other.get())
		}
		before := ha.calls.Load() + hb.calls.Load()
		time.Sleep(2 * ttl)
		if cur, ok := a.CurrentTerm(); !ok || cur.Token != term.Token {
			t.Fatalf("a lost its term to identical rewrites: %+v %v", cur, ok)
		}
		select {
		case <-span.done:
			t.Fatal("a's term ended")
		default:
		}
		// Two candidates, 2 TTLs: about 6 renewals, polls and watch
		// events. A livelock makes hundreds of thousands.
		if calls := ha.calls.Load() + hb.calls.Load() - before; calls > 60 {
			t.Fatalf("%d store calls in 2 TTLs", calls)
		}
	})
}

// 2. The store is restored from a backup taken during the leader's own term
// (same holder and term, lower seq). The leader steps down at the read that
// shows it, and never overlaps the waiter that saw the restore first.
func TestRestoreOfLeadersOwnTermStepsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second // renewals every second
		name := simName("restore-own")
		ha, hb := newFaultStore(t, name), newFaultStore(t, name)
		ha.watchDelay.Store(int64(ttl)) // a learns of the restore by its renewal
		_, term := leaderA(t, ha, ttl)
		span := spanOf(term)
		// b reads often, so it sees the restore well before a does.
		b := startCandidate(t, hb, "b", ttl, WithTimings(Timings{Poll: 100 * time.Millisecond}))

		other := openRawKey(t, name)
		at := func(d time.Duration) { time.Sleep(time.Until(span.began.Add(d))) }
		at(ttl / 6)
		backup := other.get()
		at(2*ttl/3 + 50*time.Millisecond) // just after a's second renewal
		other.put(backup)
		// a's third renewal conflicts and its read shows the restore; a is
		// cut off right after.
		ha.cutAfter.Store(true)
		<-span.done
		ledAfter(t, leadsSoon(t, b, term.Token, 3*ttl), span)
	})
}

// 3. After a read showed the key gone (the store lost its data), a late
// watch event carrying the record from before the loss must not bring the
// old leader back to a follower.
func TestLateWatchEventDoesNotUndoDataLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("late-event")
		ha, hb, hf := newFaultStore(t, name), newFaultStore(t, name), newFaultStore(t, name)
		a, _ := leaderA(t, ha, ttl)
		hf.watchDelay.Store(int64(1500 * time.Millisecond))
		_, leaders := runFollower(t, hf)
		nextNamed(t, leaders, "a", "first value")
		time.Sleep(10*ttl/3 + 100*time.Millisecond) // just after a renewal
		memfault.LoseData(name)
		a.Stop()
		nextNamed(t, leaders, "", "after the loss")
		// b joins and leads once the lost holder's lease surely ended.
		startCandidate(t, hb, "b", ttl, WithTimings(Timings{StartupWait: ttl}))
		nextNamed(t, leaders, "b", "after \"\"")
	})
}

// 4a. A follower drops a vanished leader at its expiry even when its own
// read hangs and ignores its context (raw kvtools Consul and ZooKeeper).
func TestFollowerExpiryDoesNotWaitForHungRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("hung-read")
		ha, hf := newFaultStore(t, name), newFaultStore(t, name)
		leaderA(t, ha, ttl)
		_, leaders := runFollower(t, hf)
		nextNamed(t, leaders, "a", "first value")
		time.Sleep(ttl / 3) // a renews now
		synctest.Wait()
		gone := time.Now()
		memfault.Disconnect(ha.Store) // a vanishes...
		hf.hangGets.Store(true)
		nextNamed(t, leaders, "", "after the vanish") // ...and every read of f hangs
		if got, want := time.Since(gone), ttl-ttl/10; got > want {
			t.Fatalf("named the vanished leader for %v, want at most %v", got, want)
		}
	})
}

// 4b. A renewal the leader sent before the store paused, applied after the
// leader stepped down, does not bring it back to a follower that had
// dropped it: only a new write shows a leader alive.
func TestFollowerIgnoresLateRenewalOfExpiredTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("late-renewal")
		ha, hf := newFaultStore(t, name), newFaultStore(t, name)
		a, term := leaderA(t, ha, ttl)
		span := spanOf(term)
		f, _ := runFollower(t, hf)
		obs := f.Status()
		if o := <-obs; o.Leader != "a" {
			t.Fatalf("first observation %+v", o)
		}
		ha.holdPuts.Store(true) // a's renewals hang and are applied later
		ha.failGets.Store(true)
		<-span.done
		if o := <-obs; o.Leader != "" {
			t.Fatalf("after a's deadline: %+v", o)
		}
		time.Sleep(ttl)
		ha.holdPuts.Store(false)
		ha.applyHeld() // the first held renewal lands now
		ha.failGets.Store(false)
		for {
			o := <-obs
			if o.Leader == "" {
				continue
			}
			if o.Leader != "a" || o.Token <= term.Token {
				t.Fatalf("the follower named %+v after a's term %d ended", o, term.Token)
			}
			synctest.Wait() // a handles the store's answer
			if _, ok := a.CurrentTerm(); !ok {
				t.Fatalf("the follower named a for term %d before a led it", o.Token)
			}
			return
		}
	})
}

// 5. Stop returns within a bound when the store's writes hang and ignore
// their context; the leader still stepped down at its deadline.
func TestStopReturnsWhenWritesHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		h := newFaultStore(t, simName("hung-write"))
		a := NewCandidate(h, "k", "a", ttl)
		if _, _, err := a.RunForElection(); err != nil {
			t.Fatal(err)
		}
		term := leadsSoon(t, a, 0, time.Second)
		span := spanOf(term)
		h.hangPuts.Store(true)
		<-span.done
		if got, want := span.end.Sub(span.began), ttl-ttl/10; got > want {
			t.Fatalf("stepped down after %v, deadline %v", got, want)
		}
		start := time.Now()
		a.Stop()
		// The release is abandoned after the request timeout (TTL/3) and
		// the watch given as long to close.
		if got, bound := time.Since(start), 2*ttl/3+time.Second; got > bound {
			t.Fatalf("Stop took %v, bound %v", got, bound)
		}
	})
}

// 6. An acquire that the store applies after the candidate was stopped
// starts no term: no callback, no true on the elected channel.
func TestNoTermStartsAfterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newFaultStore(t, simName("late-acquire"))
		h.applyLate.Store(true) // applied, and said so, once the caller gave up
		a := NewCandidate(h, "k", "a", 3*time.Second)
		elected, _, err := a.RunForElection()
		if err != nil {
			t.Fatal(err)
		}
		if <-elected {
			t.Fatal("first value true")
		}
		synctest.Wait() // the acquire waits in the store
		a.Stop()
		for v := range elected {
			if v {
				t.Fatal("elected after Stop")
			}
		}
		var started int
		b := NewCandidate(h, "k2", "b", 3*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			synctest.Wait()
			cancel()
		}()
		err = b.Run(ctx, Callbacks{OnStartedLeading: func(context.Context, Term) { started++ }})
		if err != nil || started != 0 {
			t.Fatalf("Run: %v, %d terms started after the cancel", err, started)
		}
	})
}

// 7. A participant that joined while the key was missing (here: after the
// store lost its data) is not told the election ended when the leader of
// before, whose generation it never saw, re-creates the key.
func TestJoinedWhileMissingSurvivesOlderGeneration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("joined-missing")
		ha, hc, hf := newFaultStore(t, name), newFaultStore(t, name), newFaultStore(t, name)
		if err := EndElection(context.Background(), ha, "k"); err != nil { // generation 1
			t.Fatal(err)
		}
		a, term := leaderA(t, ha, ttl)
		memfault.Disconnect(ha.Store) // so that f and c join while the key is missing
		memfault.LoseData(name)
		f, leaders := runFollower(t, hf)
		c := startCandidate(t, hc, "c", ttl, WithTimings(Timings{StartupWait: ttl}))
		nextNamed(t, leaders, "", "first value")
		memfault.Reconnect(ha.Store)
		// a re-creates the key with its generation 1 and leads again.
		leadsSoon(t, a, term.Token, 2*ttl)
		nextNamed(t, leaders, "a", "next value")
		time.Sleep(2 * ttl)
		if errors.Is(f.Err(), ErrElectionEnded) || errors.Is(c.Err(), ErrElectionEnded) {
			t.Fatalf("told the election ended: follower %v, candidate %v", f.Err(), c.Err())
		}
	})
}

// 8. A candidate that starts after the store lost its data, and so never
// saw the leader of before, waits Timings.StartupWait before it leads: it
// never overlaps that leader, cut off but still within its lease.
func TestStartupWaitAfterDataLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("missing-wait")
		ha, hb := newFaultStore(t, name), newFaultStore(t, name)
		_, term := leaderA(t, ha, ttl)
		span := spanOf(term)
		time.Sleep(ttl / 3) // a renews now
		synctest.Wait()
		memfault.Disconnect(ha.Store)
		memfault.LoseData(name)
		b := startCandidate(t, hb, "b", ttl, WithTimings(Timings{StartupWait: ttl}))
		ledAfter(t, leadsSoon(t, b, 0, 2*ttl), span)
	})
}

// 9. A follower busy with a slow read finds several watch events waiting
// when it returns. Each was waiting since before the read: every one of
// them is dated from the moment the follower last found none waiting, not
// the second and later ones from when the first was handled. Here the
// leader resigns and b takes over while the follower's read is slow; b
// then vanishes, and the follower must drop it within 90% of the TTL of
// b's acquire.
func TestFollowerDatesEventBacklogFromBeforeSlowRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("event-backlog")
		ha, hb, hf := newFaultStore(t, name), newFaultStore(t, name), newFaultStore(t, name)
		a, _ := leaderA(t, ha, ttl)
		b := startCandidate(t, hb, "b", ttl)
		time.Sleep(ttl / 6)
		// The follower's watch runs, so it polls every 3 poll intervals
		// (3s): its next read is sent 3s from now.
		_, leaders := runFollower(t, hf)
		nextNamed(t, leaders, "a", "first value")
		time.Sleep(2900 * time.Millisecond)
		hf.getDelay.Store(int64(700 * time.Millisecond)) // the poll at 3s answers at 3.7s
		time.Sleep(200 * time.Millisecond)
		a.Resign() // a releases, b acquires at once, while the follower's read is slow
		bt := leadsSoon(t, b, 0, 100*time.Millisecond)
		synctest.Wait()
		memfault.Disconnect(hb.Store) // b vanishes: its record stays, never renewed
		hf.getDelay.Store(0)
		for _, want := range []string{"", "b"} { // a's release, then b
			nextNamed(t, leaders, want, "the follower")
		}
		nextNamed(t, leaders, "", "the follower")
		if d, bound := time.Since(bt.Began), ttl-ttl/10; d > bound {
			t.Fatalf("the follower named the vanished b for %v after its acquire, bound %v", d, bound)
		}
	})
}

// 10. The store loses its data, a follower reads the key missing, and then
// an older record is restored (from a backup). That record is from the
// past: the follower names no one until a new write shows who leads, and
// a watch event from before the loss that arrives late does not bring its
// holder back either. Here the holder vanished before the loss and its
// lease is over: naming it again would name a leader that is gone.
func TestFollowerNamesNoOneFromRecordRestoredAfterLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("restore-after-loss")
		ha, hf := newFaultStore(t, name), newFaultStore(t, name)
		_, term := leaderA(t, ha, ttl)
		span := spanOf(term)
		_, leaders := runFollower(t, hf)
		nextNamed(t, leaders, "a", "first value")
		other := openRawKey(t, name)
		time.Sleep(ttl / 6)
		backup := other.get()
		time.Sleep(ttl - ttl/6 + 50*time.Millisecond) // just after a renewal
		memfault.Disconnect(ha.Store)                 // a vanishes
		<-span.done
		nextNamed(t, leaders, "", "after a's deadline")
		time.Sleep(ttl / 10)
		memfault.LoseData(name)
		synctest.Wait() // the follower reads the key missing
		other.put(backup)
		timeout := time.NewTimer(2 * ttl)
		defer timeout.Stop()
		select {
		case got := <-leaders:
			t.Fatalf("after a record from before the loss was restored, the follower named %q", got)
		case <-timeout.C:
		}
	})
}

// 11. After the store lost its data, a candidate's watch shows a new
// holder's record (a hint: the candidate has seen the store go back), and
// the candidate is cut off before a read confirms it. The holder renews
// meanwhile; then the store loses its data again, and the candidate, back,
// reads the key missing. The holder may have renewed until that read: the
// candidate waits the holder's TTL from it, not from when the watch showed
// the record.
func TestHintedHolderLostAgainIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("hint-lost-again")
		ha, hb := newFaultStore(t, name), newFaultStore(t, name)
		a, first := leaderA(t, ha, ttl)
		b := startCandidate(t, hb, "b", ttl)
		time.Sleep(ttl / 2)
		memfault.Disconnect(ha.Store) // so that b reads the key missing before a re-creates it
		memfault.LoseData(name)
		synctest.Wait() // b reads the key missing: the store went back
		hb.watchDelay.Store(int64(500 * time.Millisecond))
		memfault.Reconnect(ha.Store)
		second := leadsSoon(t, a, first.Token, ttl) // a re-creates the key at once
		span := spanOf(second)
		synctest.Wait()               // the event of a's record is on its way to b
		memfault.Disconnect(hb.Store) // b is cut off; the event still arrives, its reads fail
		// a renews 4 times, then vanishes within its lease...
		time.Sleep(time.Until(second.Began.Add(4*ttl/3 + 50*time.Millisecond)))
		memfault.Disconnect(ha.Store)
		memfault.LoseData(name)
		memfault.Reconnect(hb.Store) // ...and b reads the key missing
		ledAfter(t, leadsSoon(t, b, second.Token, 3*ttl), span)
	})
}

// 12. The store went back in time (a restore over a's term), and the
// waiting candidate b holds the restored free record as its state. A new
// candidate c, which never saw a's term, takes the next term over it: the
// same term number as a's, so c's record is no newer than the newest b has
// seen. b's watch shows c's record and b is cut off before a read confirms
// it; c renews meanwhile. Then the same free record is restored again, byte
// for byte, over c's term (a backup restored twice), and b, back, reads
// what looks like its own state stored again. c may have renewed until
// that read: b waits c's TTL from it, not from when the watch showed c's
// record (the simulator's seed 50: a restored "g13 t77 s5 free" over
// "t78 s6 c1").
func TestStaleHintedHolderRestoredOverIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := rewindUnderWaiter(t, "stale-hint-restored")
		s.hintedHolderRestoredOver(s.backup) // the same bytes as b's state, under a new index
	})
}

// 13. As 12, but the second restore brings back a free record of a's past
// (its release of term 2, from a backup) whose counters are higher than
// those of c's records: newer by its counters than what b's watch showed,
// it still erased c's record, and b waits c's TTL from the read.
func TestHintedHolderErasedByNewerCountersIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := rewindUnderWaiter(t, "hint-erased-newer")
		released := record{Term: s.first.Token, Seq: 9} // a's release of term 2, from a backup
		s.hintedHolderRestoredOver(released.Stamp())
	})
}

// 14. As 12, but between the two restores b reads another free record,
// newer than the one the store went back to and older than a's: b is no
// longer rewound, yet still behind the newest record it saw, so c's record
// is again only a hint to b, and b waits c's TTL from the read that shows
// it gone.
func TestHintedHolderWaitedOutAfterPartialRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := rewindUnderWaiter(t, "hint-partial-recovery") // b reads term 1 seq 1
		newer := record{Term: 1, Seq: 2}
		backup := newer.Stamp()
		s.raw.put(backup)
		synctest.Wait() // b reads term 1 seq 2: newer than its state, older than a's record
		// b's state, byte for byte, under a new index:
		s.hintedHolderRestoredOver(backup)
	})
}

// rewoundWaiter is the scene that 12 to 14 start from: the candidate b
// waits, rewound by a restore of the backup over a's term 2, and a is
// gone.
type rewoundWaiter struct {
	t      *testing.T
	raw    *rawKey
	backup []byte // the free record of term 1 that b holds as its state
	hb, hc *faultStore
	b      *Candidate
	first  Term          // a's term
	ttl    time.Duration // of every candidate
}

// rewindUnderWaiter stores a backup on a backend of its own (name), lets
// a take term 2 over it with b waiting, then cuts a off and restores the
// backup: b reads it, sees the store went back, and waits a out.
func rewindUnderWaiter(t *testing.T, name string) *rewoundWaiter {
	t.Helper()
	const ttl = 3 * time.Second // renewals every second
	name = simName(name)
	raw, backup := storedBackup(t, name)
	ha, hb, hc := newFaultStore(t, name), newFaultStore(t, name), newFaultStore(t, name)
	_, first := leaderA(t, ha, ttl) // term 2 over the backup
	b := startCandidate(t, hb, "b", ttl)
	time.Sleep(ttl / 2)           // b has seen a's term 2, renewed
	memfault.Disconnect(ha.Store) // a leads until its deadline, then is gone
	raw.put(backup)
	synctest.Wait() // b reads the backup: the store went back; b waits a out
	return &rewoundWaiter{t: t, raw: raw, backup: backup, hb: hb, hc: hc, b: b, first: first, ttl: ttl}
}

// storedBackup opens a rawKey on the backend name and stores under it a
// free record of term 1, as a release leaves it: the backup that the test
// restores later, whose bytes it returns.
func storedBackup(t *testing.T, name string) (*rawKey, []byte) {
	t.Helper()
	raw := openRawKey(t, name)
	free := record{Term: 1, Seq: 1}
	backup := free.Stamp()
	raw.put(backup)
	return raw, backup
}

// hintedHolderRestoredOver lets c, which never saw a's term 2, take the
// same term number. b's watch shows c's record and b is cut off before a
// read confirms it; c renews three times meanwhile, and b's wait from the
// event (its TTL) passes. Then c is cut off (it leads until its deadline),
// restore is stored over c's record, and b, back, reads it: b must wait
// c's TTL from that read, and lead only after c's term ended.
func (s *rewoundWaiter) hintedHolderRestoredOver(restore []byte) {
	t, ttl := s.t, s.ttl
	t.Helper()
	s.hb.watchDelay.Store(int64(500 * time.Millisecond))
	second := takesTermAgain(t, s.hc, "c", ttl, s.first)
	span := spanOf(second)
	synctest.Wait() // the event of c's record is on its way to b
	memfault.Disconnect(s.hb.Store)
	time.Sleep(time.Until(second.Began.Add(ttl + 700*time.Millisecond)))
	memfault.Disconnect(s.hc.Store)
	s.raw.put(restore)
	memfault.Reconnect(s.hb.Store)
	ledAfter(t, leadsSoon(t, s.b, second.Token, 3*ttl), span)
}

// 15. b has not yet read that the store went back (its reads fail, its
// watch works) when its watch shows c's record: no newer by its counters
// than a's, whose seq is higher, it is not adopted. Then the store goes
// back again over c's record and b's read shows it: b waits out not only
// a (the holder of its state) but c, whose lease is longer, from the read.
func TestUnadoptedHolderWithLongerLeaseIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const short, long = time.Second, 3 * time.Second
		name := simName("unadopted-longer")
		raw, v0 := storedBackup(t, name)
		ha, hb, hc := newFaultStore(t, name), newFaultStore(t, name), newFaultStore(t, name)
		_, first := leaderA(t, ha, short)
		b := startCandidate(t, hb, "b", short)
		// a renews for 3 TTLs: its seq (9) is above any c will reach.
		time.Sleep(3 * short)
		memfault.Disconnect(ha.Store)
		hb.failGets.Store(true) // b's reads fail; its watch still works
		// b's watch shows the restore; b cannot read it.
		raw.put(v0)
		second := takesTermAgain(t, hc, "c", long, first)
		span := spanOf(second)
		time.Sleep(time.Until(second.Began.Add(2*long/3 + 200*time.Millisecond)))
		memfault.Disconnect(hc.Store)
		raw.put(v0)
		hb.failGets.Store(false)
		ledAfter(t, leadsSoon(t, b, second.Token, 3*long), span)
	})
}

// 16. The leader a cannot read (its watch works) when the store is
// restored under it and a new candidate c takes the same term number; a's
// watch shows c's record. The store is restored again over c's record,
// and a's read shows the store gone back while a still leads. a may start
// a term at once only if no one else can have led: c may, so a waits c's
// lease out from the read.
func TestLeaderShownAnotherHolderIsNotExempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("leader-not-exempt")
		raw, v0 := storedBackup(t, name)
		ha, hc := newFaultStore(t, name), newFaultStore(t, name)
		a, first := leaderA(t, ha, ttl)
		// a renews for 3 TTLs: its seq (9) is above any c will reach.
		time.Sleep(time.Until(first.Began.Add(3*ttl + 100*time.Millisecond)))
		// a's reads fail; its watch works.
		ha.failGets.Store(true)
		raw.put(v0)
		second := takesTermAgain(t, hc, "c", ttl, first)
		span := spanOf(second)
		time.Sleep(time.Until(second.Began.Add(ttl/3 + 300*time.Millisecond)))
		memfault.Disconnect(hc.Store)
		raw.put(v0)
		ha.failGets.Store(false)
		ledAfter(t, leadsSoon(t, a, second.Token, 3*ttl), span)
	})
}

// 17. A follower starts while the leader a renews: its read shows a, then
// its watch takes long to open and a's renewal lands meanwhile, queued on
// the new watch. a vanishes after that renewal. The queued event may be as
// old as the watch call, not as the moment the loop took it: the follower
// stops naming a within 90% of the TTL of that renewal (found by the
// simulator, seed 27).
func TestFollowerDatesEventsQueuedDuringSlowWatchOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("slow-watch-open")
		ha, hf := newFaultStore(t, name), newFaultStore(t, name)
		leaderA(t, ha, ttl)
		ha.awaitWrite()                            // a renewed: its next renewal is a third of the TTL away
		hf.openDelay.Store(int64(2 * time.Second)) // the follower's watch opens after that
		followed := followInBackground(t, hf)
		ha.awaitWrite()
		memfault.Disconnect(ha.Store) // a's last write was the renewal while the watch opened
		renewed := ha.lastWrite()
		leaders := followed()
		namedUntilExpiry(t, leaders, "a", renewed, ttl)
	})
}

// namedUntilExpiry waits until the follower names holder, then no one, and
// fails the test unless no one came within 90% of the TTL of the holder's
// last write, at renewed.
func namedUntilExpiry(t *testing.T, leaders <-chan string, holder string, renewed time.Time, ttl time.Duration) {
	t.Helper()
	nextNamed(t, leaders, holder, "the follower")
	nextNamed(t, leaders, "", "the follower")
	if d, bound := time.Since(renewed), ttl-ttl/10; d > bound {
		t.Fatalf("the follower named the vanished %s for %v after its last write, bound %v", holder, d, bound)
	}
}

// 18. As 17, but the follower's first read is slow to answer: it shows a's
// record from before a renewal, and the watch, opened after the renewal,
// shows that renewal as its first event (the state it read when it
// opened). That state was applied at some time after the read was sent,
// perhaps before the watch call: the follower stops naming a within 90% of
// the TTL of that renewal, before the waiting b takes over (found in
// review).
func TestFollowerDatesFirstWatchEventFromItsRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("slow-first-read")
		ha, hb, hf := newFaultStore(t, name), newFaultStore(t, name), newFaultStore(t, name)
		leaderA(t, ha, ttl)
		b := startCandidate(t, hb, "b", ttl)
		ha.awaitWrite()                                   // a renewed: its next renewal is a third of the TTL away
		hf.getDelay.Store(int64(1500 * time.Millisecond)) // the follower's read is served now, answered after that
		followed := followInBackground(t, hf)
		synctest.Wait() // the read was served
		hf.getDelay.Store(0)
		ha.awaitWrite()
		memfault.Disconnect(ha.Store) // a's last write: the renewal while the read's answer was on its way
		renewed := ha.lastWrite()
		leaders := followed()
		namedUntilExpiry(t, leaders, "a", renewed, ttl)
		if term, ok := b.CurrentTerm(); ok {
			t.Fatalf("the follower named a until b had led for %v", time.Since(term.Began))
		}
	})
}

// 19. The guard of 17 and 18 costs no availability: a follower whose watch
// sends only changes (not the current value first) names a leader elected
// after it started, and one that renews every TTL/2 (the longest interval
// the options accept is close to that), without ever naming "" while the
// leader is healthy (found in review: the first event of every watch was
// once dated from the follower's last read, before it happened).
func TestFollowerFirstEventOfChangesOnlyWatchIsLive(t *testing.T) {
	collect := func(leaders <-chan string, d time.Duration) []string {
		var got []string
		t := time.NewTimer(d)
		defer t.Stop()
		for {
			select {
			case l := <-leaders:
				got = append(got, l)
			case <-t.C:
				return got
			}
		}
	}
	const ttl = 3 * time.Second
	for _, onlyChange := range []bool{false, true} {
		t.Run(fmt.Sprintf("new-leader/changes-only=%v", onlyChange), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				name := simName("first-event-live")
				hb, hf := newFaultStore(t, name), newFaultStore(t, name)
				hf.onlyChange.Store(onlyChange)
				_, leaders := runFollower(t, hf)
				nextNamed(t, leaders, "", "the follower")
				time.Sleep(2900 * time.Millisecond) // just before the follower's next poll
				b := startCandidate(t, hb, "b", ttl)
				leadsSoon(t, b, 0, time.Second)
				if got := collect(leaders, 3*ttl); len(got) != 1 || got[0] != "b" {
					t.Fatalf("while b led the follower named %q", got)
				}
			})
		})
		t.Run(fmt.Sprintf("slow-renewals/changes-only=%v", onlyChange), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				name := simName("first-event-live")
				ha, hf := newFaultStore(t, name), newFaultStore(t, name)
				hf.onlyChange.Store(onlyChange)
				a := startCandidate(t, ha, "a", ttl, WithTimings(Timings{Renew: ttl / 2}))
				leadsSoon(t, a, 0, time.Second)
				time.Sleep(ttl/2 + 5*time.Millisecond) // just after a renewal
				_, leaders := runFollower(t, hf)
				if got := collect(leaders, 4*ttl); len(got) != 1 || got[0] != "a" {
					t.Fatalf("while a led the follower named %q", got)
				}
			})
		})
	}
}

// 20. A follower's first read answers after the lease of the holder it
// shows ran out (a's last renewal, then a vanished): the follower never
// names a, not even for an instant (found in review).
func TestFollowerNeverNamesHolderExpiredBeforeFirstReadAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("slow-first-read-expired")
		ha, hf := newFaultStore(t, name), newFaultStore(t, name)
		leaderA(t, ha, ttl)
		ha.awaitWrite()
		memfault.Disconnect(ha.Store)
		renewed := ha.lastWrite()
		hf.getDelay.Store(int64(ttl - ttl/10 + 10*time.Millisecond)) // the read answers past 90% of the TTL
		f := NewFollower(hf, "k")
		t.Cleanup(f.Stop)
		obs := f.Status()
		if _, _, err := f.FollowElection(); err != nil {
			t.Fatal(err)
		}
		if o := <-obs; o.Leader != "" {
			t.Fatalf("the follower named %q %v after its last renewal (bound %v)", o.Leader, o.At.Sub(renewed), ttl-ttl/10)
		}
	})
}
