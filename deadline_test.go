package leadership

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/memory"
	"go.uber.org/goleak"
)

// In a synctest bubble time is exact, so the deadline rule can be checked to
// the nanosecond: a leader cut off from the store steps down at its last
// confirmed renewal + TTL - margin, and the next leader is elected only once
// the record has gone unrenewed for the whole TTL: a whole margin after
// the cut-off leader's own deadline.
func TestDeadlineIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			ttl    = 9 * time.Second
			renew  = 3 * time.Second // TTL/3
			margin = 900 * time.Millisecond
		)
		start := time.Now()
		a, term, ha, hb := exactLeader(t, "exact", ttl)
		b := NewCandidate(hb, "exact", "b", ttl)
		if _, _, err := b.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer b.Stop()

		// Cut a off between its renewals at 3s and 6s.
		time.Sleep(4 * time.Second)
		synctest.Wait()
		memfault.Disconnect(ha)
		lastRenewal := start.Add(renew)

		<-term.Context().Done()
		if got, want := time.Since(lastRenewal), ttl-margin; got != want {
			t.Fatalf("stepped down %v after its last renewal, want exactly %v", got, want)
		}
		if a.IsLeader() {
			t.Fatal("IsLeader after the deadline")
		}
		for {
			if bt, ok := b.CurrentTerm(); ok {
				if got, want := bt.Began.Sub(lastRenewal), ttl; got != want {
					t.Fatalf("b elected %v after a's last renewal, want exactly the TTL, %v", got, want)
				}
				if bt.Token <= term.Token {
					t.Fatalf("token %d after %d", bt.Token, term.Token)
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// A reader that never reads does not delay the step-down either.
func TestStepDownWithUnreadChannels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, _ := memory.Open(context.Background(), memory.Config{Name: simName("unread")})
		defer h.Close()
		a := NewCandidate(h, "unread", "a", 3*time.Second)
		if _, _, err := a.RunForElection(); err != nil { // channels never read
			t.Fatal(err)
		}
		defer a.Stop()
		_ = a.Status() // nor this one
		synctest.Wait()
		term, ok := a.CurrentTerm()
		if !ok {
			t.Fatal("not leader")
		}
		cut := time.Now()
		memfault.Disconnect(h)
		<-term.Context().Done()
		if took := time.Since(cut); took > 3*time.Second {
			t.Fatalf("step-down took %v", took)
		}
	})
}

// Stop returns only after every goroutine the candidate and the follower
// started has ended.
func TestStopLeavesNothingRunning(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	name := simName("leaks")
	var stops []func()
	for i := range 3 {
		h, _ := memory.Open(context.Background(), memory.Config{Name: name})
		defer h.Close()
		c := NewCandidate(h, "leaks", string(rune('a'+i)), time.Second)
		if _, _, err := c.RunForElection(); err != nil {
			t.Fatal(err)
		}
		stops = append(stops, c.Stop)
	}
	h, _ := memory.Open(context.Background(), memory.Config{Name: name})
	defer h.Close()
	f := NewFollower(h, "leaks")
	if _, _, err := f.FollowElection(); err != nil {
		t.Fatal(err)
	}
	stops = append(stops, f.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for ctx.Err() == nil && f.Leader() == "" {
		time.Sleep(time.Millisecond)
	}
	for _, stop := range stops {
		stop()
	}
}

// exactLeader opens two handles of a fresh memory store, closed when the
// test ends, and starts candidate "a" on the first, stopped when the test
// ends; it returns a with the term it won at once on the empty key.
func exactLeader(t *testing.T, key string, ttl time.Duration, opts ...Option) (*Candidate, Term, *memory.Store, *memory.Store) {
	t.Helper()
	name := simName(key)
	ha, _ := memory.Open(context.Background(), memory.Config{Name: name})
	hb, _ := memory.Open(context.Background(), memory.Config{Name: name})
	t.Cleanup(func() { _ = ha.Close(); _ = hb.Close() })
	a := NewCandidate(ha, key, "a", ttl, opts...)
	if _, _, err := a.RunForElection(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	synctest.Wait()
	term, ok := a.CurrentTerm()
	if !ok {
		t.Fatal("a did not win an empty election at once")
	}
	return a, term, ha, hb
}

// The gap between a cut-off holder's deadline and the earliest takeover is
// its whole safety margin, whatever margin it chose: `leadership run` kills
// its COMMAND at the deadline and counts on that gap (issue 23, item 1: a
// waiter that sent its takeover a quarter of the margin early left two
// COMMANDs running at once). Nothing about the margin is written in the
// record, and a waiter with another margin of its own changes nothing.
func TestTakeoverLeavesTheHolderItsWholeMargin(t *testing.T) {
	for _, margin := range []time.Duration{120 * time.Millisecond, 400 * time.Millisecond, 1900 * time.Millisecond} {
		t.Run(margin.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const ttl = 4 * time.Second
				_, term, ha, hb := exactLeader(t, "lead", ttl, WithTimings(Timings{SafetyMargin: margin}))
				pair, err := hb.Get(context.Background(), "lead", nil)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(pair.Value, []byte("margin")) {
					t.Fatalf("a's record carries its margin: %s", pair.Value)
				}

				b := NewCandidate(hb, "lead", "b", ttl, WithTimings(Timings{SafetyMargin: 10 * time.Millisecond}))
				if _, _, err := b.RunForElection(); err != nil {
					t.Fatal(err)
				}
				defer b.Stop()
				synctest.Wait()
				cut := time.Now() // a's last write was its acquire, just now
				memfault.Disconnect(ha)

				<-term.Context().Done()
				deadline := time.Now()
				if got, want := deadline.Sub(cut), ttl-margin; got != want {
					t.Fatalf("a stepped down %v after its last write, want %v", got, want)
				}
				for {
					if bt, ok := b.CurrentTerm(); ok {
						if gap := bt.Began.Sub(deadline); gap != margin {
							t.Fatalf("b elected %v after a's deadline, want a's whole margin %v", gap, margin)
						}
						return
					}
					time.Sleep(time.Millisecond)
				}
			})
		})
	}
}
