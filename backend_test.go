package leadership

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// fourCalls exposes only the calls of the Backend contract, so that a
// test on it proves the engine needs nothing else of a store.
type fourCalls struct{ s store.Store }

func (f fourCalls) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	return f.s.Get(ctx, key, opts)
}

func (f fourCalls) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	return f.s.AtomicPut(ctx, key, value, previous, opts)
}

func (f fourCalls) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	return f.s.AtomicDelete(ctx, key, previous)
}

func (f fourCalls) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	return f.s.Watch(ctx, key, opts)
}

// A store that has only the four calls runs a whole election: a leader,
// a follower naming it, the end and the deletion of the election.
func TestBackendWithOnlyTheFourCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		b := fourCalls{c.handle()}
		cand := NewCandidate(b, "svc/leader", "n1", time.Second)
		elected, _, err := cand.RunForElection()
		if err != nil {
			t.Fatal(err)
		}
		defer cand.Stop()
		recvUntil(t, elected, "elected", func(v bool) bool { return v })

		f := NewFollower(b, "svc/leader")
		leaders, _, err := f.FollowElection()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		recvUntil(t, leaders, "leader named", func(s string) bool { return s == "n1" })

		if err := DeleteElection(ctxT(t), b, "svc/leader"); err != nil {
			t.Fatalf("DeleteElection: %v", err)
		}
		closed(t, leaders, "follower's channel after the end")
	})
}

// A Backend with a floor on its TTL raises the Candidate's minimum.
type flooredBackend struct {
	fourCalls
	floor time.Duration
}

func (f flooredBackend) MinTTL() time.Duration { return f.floor }

func TestMinTTLerRaisesTheFloor(t *testing.T) {
	c := newCluster(t)
	b := flooredBackend{fourCalls{c.handle()}, 2 * time.Second}
	_, _, err := NewCandidate(b, "svc/leader", "n1", time.Second).RunForElection()
	var oe *OptionError
	if !errors.Is(err, ErrInvalidTTL) || !errors.As(err, &oe) || !strings.Contains(oe.Reason, "between 2s and") {
		t.Fatalf("RunForElection with TTL 1s on a 2s floor: %v, want ErrInvalidTTL naming the 2s floor", err)
	}
}
