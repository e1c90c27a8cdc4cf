package memory

import (
	"context"
	"sync"

	"github.com/kvtools/valkeyrie/store"
)

// queue is an unbounded FIFO between writers (holding b.mu) and one
// delivery goroutine. Writers never block on it.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	signal chan struct{} // capacity 1: "items may be non-empty"
}

func newQueue[T any]() *queue[T] {
	return &queue[T]{signal: make(chan struct{}, 1)}
}

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()

	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *queue[T]) pop() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()

	var zero T
	if len(q.items) == 0 {
		return zero, false
	}

	v := q.items[0]
	q.items[0] = zero
	q.items = q.items[1:]

	if len(q.items) == 0 {
		q.items = nil
	}

	return v, true
}

// deliver forwards queued items to out, in order, until ctx or done ends.
func deliver[T any](ctx context.Context, done <-chan struct{}, q *queue[T], out chan<- T) {
	for {
		v, ok := q.pop()
		if !ok {
			select {
			case <-q.signal:
				continue
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}

		select {
		case out <- v:
		case <-ctx.Done():
			return
		case <-done:
			return
		}
	}
}

// keyWatch is one Watch call. Fields other than q are guarded by b.mu.
type keyWatch struct {
	h          *Store
	key        string
	q          *queue[*store.KVPair]
	lastExists bool          // the last queued pair was a live key
	pending    *store.KVPair // latest change missed while unreachable
}

// treeWatch is one WatchTree call. Fields other than q are guarded by b.mu.
type treeWatch struct {
	h       *Store
	dir     string
	q       *queue[[]*store.KVPair]
	pending bool // a change was missed while unreachable
}

func (w *keyWatch) offer(p *store.KVPair) {
	if !w.h.reachable() {
		w.pending = clonePair(p)

		return
	}

	w.q.push(clonePair(p))
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
			if under(c.pair.Key, w.dir) {
				hit = true

				break
			}
		}

		if !hit {
			continue
		}

		if w.h.reachable() {
			w.q.push(b.list(w.dir))
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
				w.q.push(p)
				w.lastExists = p.Value != nil
			}
		}
	}

	for w := range b.treeWatches {
		if w.h == h && w.pending {
			w.pending = false
			w.q.push(b.list(w.dir))
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
	w := &keyWatch{h: s, key: k, q: newQueue[*store.KVPair]()}

	if e := b.lookup(k); e != nil {
		w.q.push(e.pair())
		w.lastExists = true
	} else {
		w.q.push(&store.KVPair{Key: k})
	}

	set := b.keyWatches[k]
	if set == nil {
		set = make(map[*keyWatch]struct{})
		b.keyWatches[k] = set
	}
	set[w] = struct{}{}

	out := make(chan *store.KVPair)

	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(out)

		deliver(ctx, s.closedCh, w.q, out)

		b.mu.Lock()
		delete(set, w)
		if len(set) == 0 {
			delete(b.keyWatches, k)
		}
		b.mu.Unlock()
	}()

	return out, nil
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
	w := &treeWatch{h: s, dir: normalizeKey(directory), q: newQueue[[]*store.KVPair]()}
	w.q.push(b.list(w.dir))
	b.treeWatches[w] = struct{}{}

	out := make(chan []*store.KVPair)

	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(out)

		deliver(ctx, s.closedCh, w.q, out)

		b.mu.Lock()
		delete(b.treeWatches, w)
		b.mu.Unlock()
	}()

	return out, nil
}
