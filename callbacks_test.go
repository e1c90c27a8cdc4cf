package leadership

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
)

func TestRunCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := c.handle()
		cand := NewCandidate(h, "run", "a", 500*time.Millisecond, WithTimings(Timings{ResignHoldoff: -1}))
		ctx, cancel := context.WithCancel(context.Background())
		started := make(chan Term, 10)
		stoppedWork := make(chan uint64, 10)
		var stopped atomic.Int32
		whys := make(chan Reason, 10)
		var mu sync.Mutex
		var leaders []string
		done := make(chan error)
		go func() {
			done <- cand.Run(ctx, Callbacks{
				OnStartedLeading: func(ctx context.Context, term Term) {
					started <- term
					<-ctx.Done() // the work runs until leadership ends
					stoppedWork <- term.Token
				},
				OnStoppedLeading: func(term Term, why Reason) {
					if cause := context.Cause(term.Context()); cause != why {
						t.Errorf("OnStoppedLeading: reason %v, the term's cause %v", why, cause)
					}
					whys <- why
					stopped.Add(1)
				},
				OnNewLeader: func(l string) {
					mu.Lock()
					leaders = append(leaders, l)
					mu.Unlock()
				},
			})
		}()
		first := recv(t, started, "started leading")
		cand.Resign()
		if tok := recv(t, stoppedWork, "work cancelled on resign"); tok != first.Token {
			t.Fatalf("cancelled term %d, want %d", tok, first.Token)
		}
		second := recv(t, started, "leading again")
		if second.Token <= first.Token {
			t.Fatal("token did not grow")
		}
		// Loss by deadline: cut the store off.
		memfault.Disconnect(h)
		if tok := recv(t, stoppedWork, "work cancelled at the deadline"); tok != second.Token {
			t.Fatalf("cancelled term %d, want %d", tok, second.Token)
		}
		memfault.Reconnect(h)
		recv(t, started, "leading after the store came back")
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run returned %v after cancel", err)
		}
		recv(t, stoppedWork, "work cancelled when Run ended")
		eventually(t, "OnStoppedLeading for every term", func() bool { return stopped.Load() == 3 })
		for i, want := range []Reason{ErrResigned, ErrLeaseExpired, ErrStopped} {
			if why := recv(t, whys, "a term's end"); why != want {
				t.Errorf("term %d ended with %v, want %v", i+1, why, want)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(leaders) == 0 || leaders[0] != "a" {
			t.Fatalf("OnNewLeader saw %v", leaders)
		}
	})
}

func TestRunReturnsWhenElectionEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		cand := NewCandidate(c.handle(), "runend", "a", time.Second)
		var errs atomic.Int32
		done := make(chan error)
		go func() {
			done <- cand.Run(context.Background(), Callbacks{
				OnStartedLeading: func(ctx context.Context, _ Term) { <-ctx.Done() },
				OnError:          func(error) { errs.Add(1) },
			})
		}()
		eventually(t, "leads", cand.IsLeader)
		if err := EndElection(ctxT(t), c.handle(), "runend"); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if !errors.Is(err, ErrElectionEnded) {
				t.Fatalf("Run returned %v", err)
			}
		case <-time.After(wait):
			t.Fatal("Run did not return")
		}
		if errs.Load() == 0 {
			t.Fatal("OnError never told of the end")
		}
	})
}

func TestRelinquishInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		rs := c.campaign("relinquish", time.Second, 2, WithRelinquishSchedule("@every 300ms"), WithTimings(Timings{ResignHoldoff: time.Second}))
		watchExclusion(t, rs[0].Candidate, rs[1].Candidate)
		first := leaderOf(t, rs)
		other := except(rs, first)[0]
		// The waiting candidate wins, not the one that stepped down.
		recvUntil(t, other.elected, "the other leads after the interval", func(v bool) bool { return v })
		recvUntil(t, first.elected, "and back", func(v bool) bool { return v })
	})
}

func TestRelinquishSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		_, other := c.leaderAndOther("sched", time.Second, WithRelinquishSchedule("@every 1h"), WithRelinquishSchedule("@every 1s"))
		recvUntil(t, other.elected, "handoff on schedule", func(v bool) bool { return v })
	})
}

func TestStatusStream(t *testing.T) {
	c := newCluster(t)
	a := c.campaign("status", time.Second, 1)[0]
	st := a.Status()
	s := recvUntil(t, st, "leader status", func(s Status) bool { return s.Role == RoleLeader })
	if s.CandidateID != a.name || s.Leader != a.name || s.Token == 0 {
		t.Fatalf("status %+v", s)
	}
	b := NewCandidate(c.handle(), "status", "b", time.Second)
	if _, _, err := b.RunForElection(); err != nil {
		t.Fatal(err)
	}
	defer b.Stop()
	a.Resign()
	recvUntil(t, st, "follower status", func(s Status) bool { return s.Role == RoleFollower && s.Leader == "b" })
	a.Stop()
	recvUntil(t, st, "stopped status", func(s Status) bool { return s.Role == RoleStopped })
	closed(t, st, "status channel")
	if RoleLeader.String() != "leader" || Role(42).String() != "unknown" {
		t.Fatal("Role.String")
	}
}

func TestForeignValueIsReplacedAfterTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := c.handle()
		if err := h.Put(context.Background(), "foreign", []byte("old-docker-leader"), nil); err != nil {
			t.Fatal(err)
		}
		cand := NewCandidate(h, "foreign", "a", 300*time.Millisecond)
		el, errs, err := cand.RunForElection()
		if err != nil {
			t.Fatal(err)
		}
		defer cand.Stop()
		recvUntil(t, errs, "foreign value reported", func(err error) bool { return errors.Is(err, ErrForeignValue) })
		recvUntil(t, el, "takes over after a TTL", func(v bool) bool { return v })
	})
}

// A relinquish interval or schedule time beyond the clock's range means
// never: it does not wrap around into the past (a leader stepping down at
// once).
func TestRelinquishBeyondRangeIsNever(t *testing.T) {
	for _, spec := range []string{"@every 2562047h47m16s", "CRON_TZ=UTC @every 2562047h47m15s"} {
		var c config
		WithRelinquishSchedule(spec)(&c)
		if len(c.errs) != 0 || c.relinquishInterval == 0 {
			t.Fatalf("%q: %v, interval %v", spec, c.errs, c.relinquishInterval)
		}
		e := &campaign{}
		e.cfg = &c
		if got := e.relinquishTime(5 * time.Second); got != never {
			t.Errorf("%q: relinquish at %v, want never", spec, got)
		}
	}
}

// "@every d" is exact after a time zone field too (an interval reads no
// zone), where cron would round d to whole seconds.
func TestRelinquishIntervalWithTimeZone(t *testing.T) {
	var c config
	WithRelinquishSchedule("TZ=Europe/Paris @every 1500ms")(&c)
	if len(c.errs) != 0 || c.relinquishInterval != 1500*time.Millisecond || c.relinquishSchedule != nil {
		t.Fatalf("errs %v, interval %v, schedule %v", c.errs, c.relinquishInterval, c.relinquishSchedule)
	}
}
