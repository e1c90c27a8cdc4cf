package leadership

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/memory"
)

// lateWatch is a store whose watch events arrive late, as those of one
// query watching many keys do behind a burst of renewals (Consul's at
// 10,000 elections); it counts the watches opened.
type lateWatch struct {
	Backend
	late   time.Duration
	opened *atomic.Int32
}

func (s lateWatch) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	in, err := s.Backend.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	s.opened.Add(1)
	out := make(chan *store.KVPair)
	go func() {
		defer close(out)
		for p := range in {
			time.Sleep(s.late)
			select {
			case out <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// A poll that reads a renewal before the watch delivers it does not take
// the watch for one that misses changes when the event follows within the
// grace: no watch is opened again, so no read is added, however often
// polls and renewals share a slot.
func TestLateWatchEventsAreNotDoubted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := simName("late")
		hl, _ := memory.Open(context.Background(), memory.Config{Name: name})
		hf, _ := memory.Open(context.Background(), memory.Config{Name: name})
		defer hl.Close()
		defer hf.Close()
		const ttl = 3 * time.Second
		leader := NewCandidate(hl, "late", "a", ttl)
		if _, _, err := leader.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer leader.Stop()
		var opened atomic.Int32
		f := NewFollower(lateWatch{hf, 300 * time.Millisecond, &opened}, "late")
		if _, _, err := f.FollowElection(); err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if got := f.Leader(); got != "a" {
			t.Fatalf("the follower names %q, want a", got)
		}
		if n := opened.Load(); n != 1 {
			t.Fatalf("the follower opened %d watches in 5 minutes of late events, want 1", n)
		}
	})
}
