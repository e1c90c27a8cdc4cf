package leadership

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/memory"
)

func TestFollowerFirstValueAndChanges(t *testing.T) {
	c := newCluster(t)
	f := c.follow("follow")
	leaders := f.leaders
	if got := recv(t, leaders, "first value"); got != "" {
		t.Fatalf("first value %q, want \"\" with no election yet", got)
	}
	rs := c.campaign("follow", time.Minute, 2)
	l := leaderOf(t, rs)
	recvUntil(t, leaders, "the leader", func(s string) bool { return s == l.name })
	if f.Leader() != l.name {
		t.Fatalf("Leader() = %q, want %q", f.Leader(), l.name)
	}
	if cur := f.Current(); cur.Token == 0 || cur.Leader != l.name {
		t.Fatalf("Current() = %+v", cur)
	}

	// A clean release is seen at once (the TTL is a minute).
	l.Stop()
	next := except(rs, l)[0]
	got := recvUntil(t, leaders, "after the release", func(s string) bool { return s != l.name })
	if got != "" && got != next.name {
		t.Fatalf("after release: %q", got)
	}
	recvUntil(t, leaders, "the next leader", func(s string) bool { return s == next.name })
	next.Stop()
	recvUntil(t, leaders, "no leader", func(s string) bool { return s == "" })
}

func TestFollowerStartsWithCurrentLeader(t *testing.T) {
	c := newCluster(t)
	rs := c.campaign("late", time.Minute, 1)
	l := leaderOf(t, rs)
	f := c.follow("late")
	leaders := f.leaders
	if got := recv(t, leaders, "first value"); got != l.name {
		t.Fatalf("first value %q, want %q", got, l.name)
	}
}

// In a synctest bubble time is exact: a follower stops naming a vanished
// leader at 90% of its TTL after it last saw it renewed, and names the
// successor once it is elected, at the TTL.
func TestFollowerDropsVanishedLeaderWithinTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		name := simName("vanish")
		hd, _ := memory.Open(context.Background(), memory.Config{Name: name})
		hf, _ := memory.Open(context.Background(), memory.Config{Name: name})
		ha, _ := memory.Open(context.Background(), memory.Config{Name: name})
		defer hf.Close()
		defer ha.Close()
		dead := NewCandidate(hd, "vanish", "dead", ttl)
		if _, _, err := dead.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer dead.Stop()
		synctest.Wait()
		if !dead.IsLeader() {
			t.Fatal("dead did not win an empty election at once")
		}
		f := NewFollower(hf, "vanish")
		leaders, _, err := f.FollowElection()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		nextNamed(t, leaders, "dead", "first value")
		alive := NewCandidate(ha, "vanish", "alive", ttl)
		if _, _, err := alive.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer alive.Stop()

		// The leader's client vanishes right after a renewal (at TTL/3):
		// closed, as a killed process's would be.
		time.Sleep(ttl / 3)
		synctest.Wait()
		gone := time.Now()
		_ = hd.Close()
		nextNamed(t, leaders, "", "after the vanish")
		if got, want := time.Since(gone), ttl-ttl/10; got != want {
			t.Fatalf("follower named the vanished leader for %v, want exactly %v", got, want)
		}
		nextNamed(t, leaders, alive.node, "after \"\"")
		if got, want := time.Since(gone), ttl; got != want {
			t.Fatalf("follower named the successor %v after the vanish, want exactly the TTL, %v", got, want)
		}
	})
}

func TestFollowerObservationsCarryTerms(t *testing.T) {
	c := newCluster(t)
	f := NewFollower(c.handle(), "obs")
	if _, _, err := f.FollowElection(); err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	obs := f.Status()
	recv(t, obs, "first observation")
	r := c.campaign("obs", time.Second, 1, WithTimings(Timings{ResignHoldoff: -1}))[0]
	first := recvUntil(t, obs, "leader", func(o Status) bool { return o.Leader == r.name })
	recvUntil(t, r.elected, "elected", func(v bool) bool { return v })
	r.Resign()
	later := recvUntil(t, obs, "a later term", func(o Status) bool { return o.Leader == r.name && o.Token > first.Token })
	if later.At.Before(first.At) {
		t.Fatal("observation times go backwards")
	}
}

func TestFollowerStopAnyTime(t *testing.T) {
	c := newCluster(t)
	f := NewFollower(c.handle(), "fstop")
	f.Stop()
	f.Stop()
	if _, _, err := f.FollowElection(); !errors.Is(err, ErrStopped) {
		t.Fatalf("FollowElection after Stop: %v", err)
	}
	g := NewFollower(c.handle(), "fstop")
	leaders, errs, err := g.FollowElection()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.FollowElection(); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second FollowElection: %v", err)
	}
	done := make(chan struct{})
	for range 5 {
		go func() { g.Stop(); done <- struct{}{} }()
	}
	for range 5 {
		<-done
	}
	closed(t, leaders, "leader channel")
	closed(t, errs, "error channel")
}

func TestFollowerUnreachableStore(t *testing.T) {
	c := newCluster(t)
	h := c.handle()
	memfault.Disconnect(h)
	f := NewFollower(h, "down")
	if _, _, err := f.FollowElection(); !errors.Is(err, ErrStore) {
		t.Fatalf("FollowElection on an unreachable store: %v, want ErrStore", err)
	}
	f.Stop()
	cand := NewCandidate(h, "down", "a", time.Second)
	if _, _, err := cand.RunForElection(); !errors.Is(err, ErrStore) {
		t.Fatalf("RunForElection on an unreachable store: %v, want ErrStore", err)
	}
	// The store came back: the same candidate can try again.
	memfault.Reconnect(h)
	if _, _, err := cand.RunForElection(); err != nil {
		t.Fatalf("RunForElection after the store came back: %v", err)
	}
	cand.Stop()
}

// A follower that stops no longer sees its holder's renewals: it names no
// one from the moment its Stop is under way, so that what it shows never
// outlives the holder's lease (simulator seed 5303085 saw a stopping
// follower name a holder 78ms past its lease). The leader channel's last
// value is "".
func TestFollowerNamesNoOneOnceStopped(t *testing.T) {
	c := newCluster(t)
	rs := c.campaign("stopnames", time.Minute, 1)
	l := leaderOf(t, rs)
	f := c.follow("stopnames")
	recvUntil(t, f.leaders, "the leader", func(s string) bool { return s == l.name })
	f.Stop()
	if got := f.Leader(); got != "" {
		t.Fatalf("Leader() after Stop = %q, want \"\"", got)
	}
	var last string
	for v := range f.leaders {
		last = v
	}
	if last != "" {
		t.Fatalf("the leader channel's last value %q, want \"\"", last)
	}
	if cur := f.Current(); cur.Leader != "" || cur.Token == 0 {
		t.Fatalf("Current() after Stop = %+v, want no leader in the last term seen", cur)
	}
}
