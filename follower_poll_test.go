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

// getCounter counts the reads a follower makes.
type getCounter struct {
	Backend
	gets atomic.Int64
}

func (g *getCounter) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	g.gets.Add(1)
	return g.Backend.Get(ctx, key, opts)
}

// While its watch works, a follower still reads the key now and then (some
// watches miss changes): by default every 3s or every TTL/3 of the leader's
// record, whichever is longer, so that a long lease is not read 20 times a
// minute; every 3 poll intervals when Timings.Poll is given.
func TestFollowerWatchedPollFollowsTheTTL(t *testing.T) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		opts []Option
		want int64 // reads in a minute
	}{
		{"default poll, TTL 30s", 30 * time.Second, nil, 6},
		{"default poll, TTL 2s", 2 * time.Second, nil, 20},
		{"Timings.Poll 1s, TTL 30s", 30 * time.Second, []Option{WithTimings(Timings{Poll: time.Second})}, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				name := simName("poll")
				hl, _ := memory.Open(context.Background(), memory.Config{Name: name})
				hf, _ := memory.Open(context.Background(), memory.Config{Name: name})
				defer hl.Close()
				defer hf.Close()
				leader := NewCandidate(hl, "poll", "a", tc.ttl)
				if _, _, err := leader.RunForElection(); err != nil {
					t.Fatal(err)
				}
				defer leader.Stop()
				counter := &getCounter{Backend: hf}
				f := NewFollower(counter, "poll", tc.opts...)
				leaders, _, err := f.FollowElection()
				if err != nil {
					t.Fatal(err)
				}
				defer f.Stop()
				for got := range leaders {
					if got == "a" {
						break
					}
				}
				// The reads that check what the new watch may have
				// missed (settled, observer.go) come once, in its first
				// poll interval: the steady pace is counted after them.
				time.Sleep(5 * time.Second)
				synctest.Wait()
				before := counter.gets.Load()
				time.Sleep(time.Minute)
				synctest.Wait()
				if got := counter.gets.Load() - before; got < tc.want-1 || got > tc.want+1 {
					t.Fatalf("%d reads in a minute, want %d (±1)", got, tc.want)
				}
				if !leader.IsLeader() {
					t.Fatal("the leader lost its lease")
				}
			})
		})
	}
}
