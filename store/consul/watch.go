package consul

import (
	"context"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/watch"
)

// merge returns a context that ends with ctx or with the store.
func (s *kv) merge(ctx context.Context) (context.Context, context.CancelFunc) {
	return watch.Joined(ctx, s.ctx)
}

// blocking runs blocking queries on behalf of a watch: each waits up to
// watchWait for the index to move past the last one seen, honours the
// watch's context, and is bounded so that a silently dead connection
// fails the watch.
type blocking struct {
	s     *kv
	index uint64
}

func (b *blocking) options(ctx context.Context) (*api.QueryOptions, context.CancelFunc) {
	rctx, cancel := context.WithTimeout(ctx, watchWait*17/16+b.s.requestTimeout)
	q := &api.QueryOptions{RequireConsistent: true, WaitIndex: b.index, WaitTime: watchWait}
	return q.WithContext(rctx), cancel
}

// next records the index of a reply. An index going backwards (a restored
// snapshot, a new cluster) restarts from 0, as Consul's documentation
// asks. A reply that came back at once without a new index is throttled,
// so that a misbehaving server cannot make the watch spin.
func (b *blocking) next(ctx context.Context, index uint64, start time.Time) {
	switch {
	case index < b.index:
		b.index = 0
	case index == b.index && time.Since(start) < 10*time.Millisecond:
		watch.Sleep(ctx, 100*time.Millisecond)
	default:
		b.index = index
	}
}

// WatchTree sends the pairs below directory (as List returns them, but an
// empty list rather than an error when there are none) first, then the
// new list after each change below it. Unlike Watch, each WatchTree runs
// consistent blocking queries of its own (up to 30s each, bound to its
// context), on a connection of its own: elections do not use it. The
// channel closes when ctx ends, the store closes or a query fails.
func (s *kv) WatchTree(ctx context.Context, directory string, _ *store.ReadOptions) (<-chan []*store.KVPair, error) {
	base, err := dir(directory)
	if err != nil {
		return nil, err
	}
	ch := make(chan []*store.KVPair)
	wctx, cancel := s.merge(ctx)
	if !s.startTask(func() bool { return true }, func() {
		defer close(ch)
		defer cancel()
		b := blocking{s: s}
		var last []*store.KVPair
		first := true
		for wctx.Err() == nil {
			q, qcancel := b.options(wctx)
			start := time.Now()
			ps, meta, err := s.watchClient.KV().List(base+"/", q)
			qcancel()
			if err != nil {
				return
			}
			pairs, _ := children(base, ps)
			if first || !samePairs(last, pairs) {
				first, last = false, pairs
				if !watch.Send(wctx, ch, pairs) {
					return
				}
			}
			b.next(wctx, meta.LastIndex, start)
		}
	}) {
		cancel()
		return nil, errClosed
	}
	return ch, nil
}

func samePairs(a, b []*store.KVPair) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].LastIndex != b[i].LastIndex {
			return false
		}
	}
	return true
}
