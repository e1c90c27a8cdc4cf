package memory

import (
	"context"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/watch"

	"github.com/leadership-go/leadership/store/internal/kv"
)

// feedRoom is how many events a watch's channel buffers: a reader that
// keeps up never makes a goroutine wait for it (watch.Feed).
const feedRoom = 4

// keyWatch is one Watch call. Fields other than q are guarded by b.mu.
type keyWatch struct {
	h          *Store
	key        string
	q          *watch.Feed[*store.KVPair]
	lastExists bool          // the last queued pair was a live key
	pending    *store.KVPair // latest change missed while unreachable
}

// treeWatch is one WatchTree call. Fields other than q are guarded by b.mu.
type treeWatch struct {
	h       *Store
	dir     string
	q       *watch.Feed[[]*store.KVPair]
	pending bool // a change was missed while unreachable
}

func (w *keyWatch) offer(p *store.KVPair) {
	if !w.h.reachable() {
		w.pending = kv.ClonePair(p)

		return
	}

	w.q.Push(kv.ClonePair(p))
	w.lastExists = p.Value != nil
}

// publish queues changes for the watches they concern. Must be called with
// b.mu held, after the changes are applied.
func (b *backend) publish(changes ...change) {
	if len(changes) == 0 {
		return
	}

	for _, c := range changes {
		for w := range b.keyWatches[c.pair.Key] {
			w.offer(c.pair)
		}
	}

	for w := range b.treeWatches {
		hit := false
		for _, c := range changes {
			if kv.Under(c.pair.Key, w.dir) {
				hit = true

				break
			}
		}

		if !hit {
			continue
		}

		if w.h.reachable() {
			w.q.Push(b.list(w.dir))
		} else {
			w.pending = true
		}
	}
}

// resumeWatches delivers to h's watches the current state of what changed
// while h was unreachable. Must be called with b.mu held.
func (b *backend) resumeWatches(h *Store) {
	for _, set := range b.keyWatches {
		for w := range set {
			if w.h != h || w.pending == nil {
				continue
			}

			p := w.pending
			w.pending = nil

			if p.Value != nil || w.lastExists {
				w.q.Push(p)
				w.lastExists = p.Value != nil
			}
		}
	}

	for w := range b.treeWatches {
		if w.h == h && w.pending {
			w.pending = false
			w.q.Push(b.list(w.dir))
		}
	}
}

// Watch returns a channel that first receives the current pair at key (an
// empty pair with only Key set when the key does not exist), then one pair
// per change, in order: the new pair after a write, an empty pair (nil
// Value, LastIndex of the deletion) after a delete or an expiry. Existing
// keys always have a non-nil Value. Writers never wait for the reader. The
// channel closes when ctx is done or the handle is closed. While the handle
// is unreachable nothing is delivered; when it becomes reachable again the
// latest state is delivered first if it changed.
func (s *Store) Watch(ctx context.Context, key string, _ *store.ReadOptions) (<-chan *store.KVPair, error) {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return nil, err
	}
	defer s.b.mu.Unlock()

	b := s.b
	set := b.keyWatches[k]
	if set == nil {
		set = make(map[*keyWatch]struct{})
		b.keyWatches[k] = set
	}
	w := &keyWatch{h: s, key: k}
	w.q = feed[*store.KVPair](ctx, s, func() {
		delete(set, w)
		if len(set) == 0 {
			delete(b.keyWatches, k)
		}
	})

	if e := b.lookup(k); e != nil {
		w.q.Push(e.pair())
		w.lastExists = true
	} else {
		w.q.Push(&store.KVPair{Key: k})
	}

	set[w] = struct{}{}

	return w.q.C(), nil
}

// WatchTree returns a channel that first receives the current children of
// directory (as List, an empty slice when there are none), then the full
// list again after every change below directory, deletions and expiries
// included. Delivery follows the same rules as Watch.
func (s *Store) WatchTree(ctx context.Context, directory string, _ *store.ReadOptions) (<-chan []*store.KVPair, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.b.mu.Unlock()

	b := s.b
	w := &treeWatch{h: s, dir: kv.NormalizeKey(directory)}
	w.q = feed[[]*store.KVPair](ctx, s, func() { delete(b.treeWatches, w) })
	w.q.Push(b.list(w.dir))
	b.treeWatches[w] = struct{}{}

	return w.q.C(), nil
}

// feed returns the events' feed of a watch of s, stopped when ctx is done
// or s is closed, which then calls unregister with the backend's lock
// held.
func feed[T any](ctx context.Context, s *Store, unregister func()) *watch.Feed[T] {
	return watch.NewFeed[T](feedRoom, &s.wg, func() {
		s.b.mu.Lock()
		unregister()
		s.b.mu.Unlock()
	}, ctx, s.life)
}
