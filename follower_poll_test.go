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

// While its watch delivers the leader's renewals, a follower reads
// nothing: the slow poll (some watches miss changes) counts from the last
// change the watch showed, and by default waits 3s or half the leader's
// TTL, whichever is longer, more than a renewal interval. A Timings.Poll
// given shorter than the renewals still reads every 3 polls between them.
func TestFollowerWatchedPollFollowsTheTTL(t *testing.T) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
		opts []Option
		want int64 // reads in a minute
	}{
		{"default poll, TTL 30s", 30 * time.Second, nil, 0},
		{"default poll, TTL 2s", 2 * time.Second, nil, 0},
		// Renewals every 10s, a read 3s, 6s and 9s after each.
		{"Timings.Poll 1s, TTL 30s", 30 * time.Second, []Option{WithTimings(Timings{Poll: time.Second})}, 18},
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

// Neither the leader (its renewals confirm the record) nor a waiting
// candidate (its watch delivers them) reads the key while the leader
// renews; once the renewals stop, the waiting candidate reads and takes
// over within the TTL and a poll interval.
func TestCandidatesReadNothingWhileTheWatchShowsRenewals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 30 * time.Second
		name := simName("cpoll")
		ha, _ := memory.Open(context.Background(), memory.Config{Name: name})
		hb, _ := memory.Open(context.Background(), memory.Config{Name: name})
		defer ha.Close()
		defer hb.Close()
		ca, cb := &getCounter{Backend: ha}, &getCounter{Backend: hb}
		a := NewCandidate(ca, "cpoll", "a", ttl)
		if _, _, err := a.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer a.Stop()
		for !a.IsLeader() {
			time.Sleep(10 * time.Millisecond)
		}
		b := NewCandidate(cb, "cpoll", "b", ttl)
		elected, _, err := b.RunForElection()
		if err != nil {
			t.Fatal(err)
		}
		defer b.Stop()
		time.Sleep(5 * time.Second) // past the reads that settle a new watch
		synctest.Wait()
		beforeA, beforeB := ca.gets.Load(), cb.gets.Load()
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := ca.gets.Load() - beforeA; got != 0 {
			t.Errorf("the leader read the key %d times in a minute, want 0", got)
		}
		if got := cb.gets.Load() - beforeB; got != 0 {
			t.Errorf("the waiting candidate read the key %d times in a minute, want 0", got)
		}
		if !a.IsLeader() || b.IsLeader() {
			t.Fatal("the leader changed while it renewed")
		}
		a.Stop()
		for won := range elected {
			if won {
				break
			}
		}
	})
}
