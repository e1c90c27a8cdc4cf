package leadership

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/memory"
)

// silentWatch is a store whose watches open and then deliver nothing, as
// kvtools' etcd watch does once its client resumed it from a revision that
// a server restarted without its data does not have yet.
type silentWatch struct {
	Backend
}

func (s silentWatch) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	ch := make(chan *store.KVPair)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch, nil
}

// Whatever a watch does, the follower's own reads find the leader and keep
// naming it while it renews: a watch that a poll shows to have missed a
// renewal is opened again, and the key is polled as if no watch ran until
// an event shows a change first.
func TestFollowerOfASilentWatchNamesTheLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := simName("silent")
		hl, _ := memory.Open(context.Background(), memory.Config{Name: name})
		hf, _ := memory.Open(context.Background(), memory.Config{Name: name})
		defer hl.Close()
		defer hf.Close()
		const ttl = 2 * time.Second
		leader := NewCandidate(hl, "silent", "a", ttl)
		if _, _, err := leader.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer leader.Stop()
		f := NewFollower(silentWatch{hf}, "silent")
		leaders, _, err := f.FollowElection()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		var names []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			for l := range leaders {
				names = append(names, l)
			}
		}()
		// Settled after a few polls: from then on, "a" all along.
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := f.Leader(); got != "a" {
			t.Fatalf("the follower names %q 10s in, want a (names so far %q)", got, names)
		}
		synctest.Wait()
		from := len(names)
		time.Sleep(time.Minute)
		synctest.Wait()
		if later := names[from:]; len(later) > 0 {
			t.Fatalf("the follower of a silent watch changed its mind while the leader renewed: %q", later)
		}
		if !leader.IsLeader() {
			t.Fatal("the leader lost its lease")
		}
		f.Stop()
		<-done
	})
}
