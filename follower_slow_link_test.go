package leadership

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/memory"
)

// slowLink is a store behind a slow link: every read and every watch open
// takes delay (a watch open on etcd is a read plus a watch created: two
// round trips of a link to another region).
type slowLink struct {
	Backend
	delay   time.Duration
	watches *atomic.Int64 // watch opens so far; the first one fails
}

func (s slowLink) wait(ctx context.Context) error {
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s slowLink) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Backend.Get(ctx, key, opts)
}

func (s slowLink) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	if s.watches.Add(1) == 1 {
		return nil, errors.New("the link dropped the watch")
	}
	return s.Backend.Watch(ctx, key, opts)
}

// A follower whose every read and watch open takes longer than its poll
// interval (1.5 s against 1 s), but less than its request timeout, still
// follows, even when its first watch failed and must be opened again: its calls are bounded by the request timeout and the leader's
// expiry, not by the poll interval.
func TestFollowerOverASlowLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := simName("slowlink")
		hl, _ := memory.Open(context.Background(), memory.Config{Name: name})
		hf, _ := memory.Open(context.Background(), memory.Config{Name: name})
		defer hl.Close()
		defer hf.Close()
		f := NewFollower(slowLink{Backend: hf, delay: 1500 * time.Millisecond, watches: new(atomic.Int64)}, "slowlink")
		leaders, _, err := f.FollowElection()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		if got := <-leaders; got != "" {
			t.Fatalf("first value %q, want \"\"", got)
		}
		leader := NewCandidate(hl, "slowlink", "a", 10*time.Second)
		if _, _, err := leader.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer leader.Stop()
		timeout := time.After(time.Minute)
		for {
			select {
			case got := <-leaders:
				if got == "a" {
					return
				}
			case <-timeout:
				t.Fatalf("the follower names %q a minute after a was elected", f.Leader())
			}
		}
	})
}
