package leadership

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// jump moves the clock by d without firing any timer: the process was
// starved, its goroutines did not run.
func (c *fakeClock) jump(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// healthSays fails the test unless err matches ErrUnhealthy and says want.
func healthSays(t *testing.T, err error, want string) {
	t.Helper()
	if !errors.Is(err, ErrUnhealthy) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Health = %v, want ErrUnhealthy saying %q", err, want)
	}
}

// Health is an error before the start and after the stop, nil while the
// engine makes progress, and an error while no store call works.
func TestHealthFollowsProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		cand := NewCandidate(c.handle(), "health", "a", time.Second)
		healthSays(t, cand.Health(time.Minute), "not started")
		f := NewFollower(c.handle(), "health")
		healthSays(t, f.Health(time.Minute), "not started")
		if _, err := cand.awaitTerm(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.FollowElection(); err != nil {
			t.Fatal(err)
		}
		if err := cand.Health(time.Minute); err != nil {
			t.Fatalf("leader: %v", err)
		}
		if err := f.Health(time.Minute); err != nil {
			t.Fatalf("follower: %v", err)
		}
		stopServer(c.name)
		const bound = 300 * time.Millisecond
		eventually(t, "the leader unhealthy", func() bool { return cand.Health(bound) != nil })
		healthSays(t, cand.Health(bound), "no store call has worked")
		eventually(t, "the follower unhealthy", func() bool { return f.Health(bound) != nil })
		healthSays(t, f.Health(bound), "no store call has worked")
		startServer(c.name)
		eventually(t, "the candidate healthy again", func() bool { return cand.Health(bound) == nil })
		eventually(t, "the follower healthy again", func() bool { return f.Health(bound) == nil })
		cand.Stop()
		f.Stop()
		healthSays(t, cand.Health(time.Minute), "stopped")
		healthSays(t, f.Health(time.Minute), "stopped")
	})
}

// A leader still holding its lease past its deadline (its watchdog did not
// run) is unhealthy, though it no longer says it leads.
func TestHealthLeaderPastDeadline(t *testing.T) {
	clk := newFakeClock()
	c, _ := electedOnClock(t, newCluster(t).handle(), clk, 10*time.Second)
	if err := c.Health(time.Hour); err != nil {
		t.Fatal(err)
	}
	clk.jump(11 * time.Second) // past the deadline (TTL - margin) by two seconds
	if c.IsLeader() {
		t.Fatal("IsLeader past the deadline")
	}
	healthSays(t, c.Health(time.Hour), "past its deadline")
}

// A candidate that stopped because its election ended says so.
func TestHealthSaysWhyStopped(t *testing.T) {
	c := newCluster(t)
	rs := c.campaign("health-end", time.Second, 1)
	recvUntil(t, rs[0].elected, "elected", func(v bool) bool { return v })
	if err := EndElection(ctxT(t), rs[0].client, rs[0].key); err != nil {
		t.Fatal(err)
	}
	closed(t, rs[0].Done(), "Done")
	err := rs[0].Health(time.Minute)
	if !errors.Is(err, ErrUnhealthy) || !errors.Is(err, ErrElectionEnded) {
		t.Fatalf("Health = %v", err)
	}
}
