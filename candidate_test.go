package leadership

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/memfault"
)

func TestFirstElectionOneLeader(t *testing.T) {
	c := newCluster(t)
	clk := newFakeClock()
	rs := c.campaign("service/leader", time.Second, 3, withClock(clk))
	var cands []*Candidate
	for _, r := range rs {
		cands = append(cands, r.Candidate)
		if v := recv(t, r.elected, r.name+" first value"); v {
			t.Fatalf("%s: first value is true, want false", r.name)
		}
	}
	watchExclusion(t, cands...)
	leader := leaderOf(t, rs)
	if !recv(t, leader.elected, "leader's true") {
		t.Fatal("leader's second value is false")
	}
	for _, r := range rs {
		if r != leader && r.IsLeader() {
			t.Fatalf("%s leads too", r.name)
		}
	}
	term, ok := leader.CurrentTerm()
	if !ok || term.Token == 0 || leader.leader() != leader.name {
		t.Fatalf("CurrentTerm = %+v, %v", term, ok)
	}
	// Leadership holds over several TTLs: renewals work. The injected
	// clock moves a renewal interval at a time, once the last renewal
	// landed, so a loaded machine cannot make this test fail.
	h := c.handle()
	for range 9 {
		seq := recordOf(t, h, "service/leader").Seq
		clk.advance(time.Second / 3)
		eventually(t, "a renewal", func() bool { return recordOf(t, h, "service/leader").Seq > seq })
	}
	if !leader.IsLeader() {
		t.Fatal("leader lost leadership without cause")
	}
	if again, _ := leader.CurrentTerm(); again.Token != term.Token {
		t.Fatalf("term changed from %d to %d without cause", term.Token, again.Token)
	}
}

func TestResignHandsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		// A TTL far above the test's wait: a handoff that waited for it fails.
		rs := c.campaign("resign", 10*wait, 3)
		watchExclusion(t, rs[0].Candidate, rs[1].Candidate, rs[2].Candidate)
		old := leaderOf(t, rs)
		recvUntil(t, old.elected, "old leader true", func(v bool) bool { return v })
		term, _ := old.CurrentTerm()

		old.Resign()
		if old.IsLeader() {
			t.Fatal("IsLeader true after Resign returned")
		}
		select {
		case <-term.Context().Done():
		default:
			t.Fatal("term context not cancelled when Resign returned")
		}
		if !recvUntil(t, old.elected, "old leader false", func(v bool) bool { return !v }) == false {
			t.Fatal("unreachable")
		}
		next := leaderOf(t, except(rs, old))
		tokenAbove(t, next, term, "the new term")
	})
}

func TestResignWithoutLeadershipDoesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		leader, other := c.leaderAndOther("noop", time.Second)
		other.Resign()
		other.Resign()
		time.Sleep(200 * time.Millisecond)
		if !leader.IsLeader() {
			t.Fatal("a follower's Resign changed the leader")
		}
		// Resign before and after running is harmless too.
		idle := NewCandidate(c.handle(), "noop", "idle", time.Second)
		idle.Resign()
		idle.Stop()
		idle.Resign()
	})
}

func TestLoneCandidateTakesBackAfterResign(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		rs := c.campaign("lone", time.Second, 1, WithTimings(Timings{ResignHoldoff: 50 * time.Millisecond}))
		r := rs[0]
		recvUntil(t, r.elected, "elected", func(v bool) bool { return v })
		first, _ := r.CurrentTerm()
		r.Resign()
		recvUntil(t, r.elected, "resigned", func(v bool) bool { return !v })
		recvUntil(t, r.elected, "elected again", func(v bool) bool { return v })
		tokenAbove(t, r, first, "elected again")
	})
}

func TestStopReleasesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		// A TTL far longer than the test's deadline: only a release can hand over.
		old, next := c.leaderAndOther("stop", time.Minute)
		old.Stop()
		if old.IsLeader() {
			t.Fatal("IsLeader after Stop")
		}
		closed(t, old.elected, "stopped candidate's elected channel")
		closed(t, old.errs, "stopped candidate's error channel")
		recvUntil(t, next.elected, "next leader", func(v bool) bool { return v })
		if old.Err() != nil {
			t.Fatalf("Err after Stop = %v, want nil", old.Err())
		}
	})
}

func TestStopAndResignAnyTimeAnyGoroutine(t *testing.T) {
	c := newCluster(t)
	rs := c.campaign("chaos", 200*time.Millisecond, 3)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			r := rs[i%3]
			for range 50 {
				r.Resign()
				_ = r.IsLeader()
				_, _ = r.CurrentTerm()
			}
			if i%5 == 0 {
				r.Stop()
			}
		})
	}
	wg.Wait()
	for _, r := range rs {
		r.Stop()
		r.Stop()
		closed(t, r.elected, r.name)
	}
	// Stop before RunForElection; RunForElection after Stop.
	idle := NewCandidate(c.handle(), "chaos", "idle", time.Second)
	idle.Stop()
	if _, _, err := idle.RunForElection(); !errors.Is(err, ErrStopped) {
		t.Fatalf("RunForElection after Stop: %v, want ErrStopped", err)
	}
	select {
	case <-idle.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
}

func TestSecondRunForElection(t *testing.T) {
	c := newCluster(t)
	cand := NewCandidate(c.handle(), "twice", "a", time.Second)
	defer cand.Stop()
	if _, _, err := cand.RunForElection(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cand.RunForElection(); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second RunForElection: %v, want ErrAlreadyRunning", err)
	}
	if err := cand.Run(context.Background(), Callbacks{}); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("Run after RunForElection: %v, want ErrAlreadyRunning", err)
	}
}

func TestContextCancelStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		ctx, cancel := context.WithCancel(context.Background())
		a := NewCandidate(c.handle(), "ctx", "a", time.Minute)
		el, errs, err := a.runUnder(ctx)
		if err != nil {
			t.Fatal(err)
		}
		recvUntil(t, el, "a elected", func(v bool) bool { return v })
		b := NewCandidate(c.handle(), "ctx", "b", time.Minute)
		bel, _, err := b.RunForElection()
		if err != nil {
			t.Fatal(err)
		}
		defer b.Stop()
		cancel()
		closed(t, el, "a's elected channel")
		closed(t, errs, "a's error channel")
		<-a.Done()
		recvUntil(t, bel, "b elected after a's context ended", func(v bool) bool { return v })
	})
}

func TestFencingTokensStrictlyGrow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		rs := c.campaign("fence", 2*time.Second, 3, WithTimings(Timings{ResignHoldoff: time.Second}))
		var last uint64
		for i := range 8 {
			l := leaderOf(t, rs)
			term, ok := l.CurrentTerm()
			if !ok {
				continue
			}
			if term.Token <= last {
				t.Fatalf("round %d: token %d not above %d", i, term.Token, last)
			}
			last = term.Token
			l.Resign()
		}
	})
}

func TestSlowConsumerMissesNoTransition(t *testing.T) {
	c := newCluster(t)
	cand := NewCandidate(c.handle(), "slow", "a", 300*time.Millisecond, WithTimings(Timings{ResignHoldoff: -1}))
	el, _, err := cand.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	defer cand.Stop()
	// No one reads: cycle through leadership several times.
	seen := 0
	for seen < 4 {
		if term, ok := cand.CurrentTerm(); ok && term.Token > uint64(seen) {
			seen = int(term.Token)
			cand.Resign()
		}
		time.Sleep(time.Millisecond)
	}
	// Renewal and step-down never waited for the reader; now every
	// transition arrives, alternating, starting with false.
	want := false
	for i := range 2*seen + 1 {
		if got := recv(t, el, "transition"); got != want {
			t.Fatalf("value %d = %v, want %v", i, got, want)
		}
		want = !want
	}
}

func TestLeaderKeepsLeadingWithUnreadChannels(t *testing.T) {
	// In a bubble, so that a loaded machine cannot stall the renewals.
	synctest.Test(t, func(t *testing.T) {
		cand := NewCandidate(newFaultStore(t, simName("unread")), "unread", "a", 100*time.Millisecond)
		if _, _, err := cand.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer cand.Stop()
		term := leadsSoon(t, cand, 0, time.Second)
		time.Sleep(time.Second) // ten TTLs with no reader at all
		if now, ok := cand.CurrentTerm(); !ok || now.Token != term.Token {
			t.Fatalf("lost leadership while no one read: %+v %v", now, ok)
		}
	})
}

func TestPartitionedLeaderStepsDownBeforeTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		ttl := time.Second
		var rs []*runner
		var stores []store.Store
		for i := range 3 {
			h := c.handle()
			cand := NewCandidate(h, "partition", []string{"a", "b", "c"}[i], ttl)
			el, errs, err := cand.RunForElection()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(cand.Stop)
			rs = append(rs, &runner{Candidate: cand, name: cand.node, elected: el, errs: errs})
			stores = append(stores, h)
		}
		x := watchExclusion(t, rs[0].Candidate, rs[1].Candidate, rs[2].Candidate)
		old := leaderOf(t, rs)
		idx := 0
		for i, r := range rs {
			if r == old {
				idx = i
			}
		}
		term, _ := old.CurrentTerm()
		cut := time.Now()
		memfault.Disconnect(stores[idx])
		termEnds(t, term, "partitioned leader's term never ended")
		// When, on the wall clock, is logged only (a loaded machine delays what
		// the test sees): the promise, stepping down before anyone else leads,
		// is x.check's; the deadline itself is TestStepDownOnInjectedClock's.
		t.Logf("stepped down %v after the cut (TTL %v)", time.Since(cut), ttl)
		recvUntil(t, old.errs, "partitioned leader reports store errors", func(error) bool { return true })
		next := leaderOf(t, except(rs, old))
		tokenAbove(t, next, term, "the next leader's term")
		x.check(t)
	})
}

func TestStoreOutageRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		rs := c.campaign("outage", 500*time.Millisecond, 2)
		f := c.follow("outage")
		leaders, ferrs := f.leaders, f.errs
		old := leaderOf(t, rs)
		recvUntil(t, leaders, "follower sees the leader", func(s string) bool { return s == old.name })

		stopServer(c.name)
		recvUntil(t, old.errs, "leader reports the outage", func(err error) bool { return errors.Is(err, ErrStore) })
		eventually(t, "no leader while the store is down", func() bool { return !rs[0].IsLeader() && !rs[1].IsLeader() })
		recvUntil(t, ferrs, "follower reports the outage", func(err error) bool { return errors.Is(err, ErrStore) })
		recvUntil(t, leaders, "follower drops the leader it cannot confirm", func(s string) bool { return s == "" })

		startServer(c.name)
		l := leaderOf(t, rs)
		recvUntil(t, leaders, "follower sees a leader again", func(s string) bool { return s == l.name })
	})
}

// After Stop, the last value of the elected channel is false even when the
// reader left a true in the buffer.
func TestElectedChannelEndsOnFalse(t *testing.T) {
	for range 20 {
		s := newBoolSink()
		g := newSinkGroup(s)
		g.start()
		if <-s.channel() {
			t.Fatal("first value true")
		}
		s.push(true)
		for len(s.channel()) == 0 { // the true waits in the buffer, unread
			time.Sleep(time.Microsecond)
		}
		s.push(false)
		g.close()
		var got []bool
		for v := range s.channel() {
			got = append(got, v)
		}
		if len(got) > 0 && got[len(got)-1] {
			t.Fatalf("after the first false the reader saw %v", got)
		}
	}
}

// A Run that could not start (store down) can be tried again.
func TestRunAfterFailedStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := c.handle()
		cand := NewCandidate(h, "rerun", "a", time.Second)
		memfault.Disconnect(h)
		if err := cand.Run(context.Background(), Callbacks{}); !errors.Is(err, ErrStore) {
			t.Fatalf("Run on a store that is down: %v", err)
		}
		memfault.Reconnect(h)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- cand.Run(ctx, Callbacks{OnStartedLeading: func(context.Context, Term) { cancel() }})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("second Run: %v", err)
			}
		case <-time.After(wait):
			t.Fatal("second Run never led")
		}
	})
}
