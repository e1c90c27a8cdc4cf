package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/watch"

	"github.com/leadership-go/leadership/store/internal/kv"
)

// keyItem is what the listener queues for a key watch: one notification
// (a hint that the key changed: nothing it carries is delivered), or a
// resync order after notifications may have been missed.
type keyItem struct {
	resync bool
	xid    uint64 // the writing transaction the notification names
	del    bool   // it says the key was deleted
	idx    uint64 // the index it gives the change
}

type keyWatch struct {
	key string
	q   *watch.Queue[keyItem]
}

// treeItem is what the listener queues for a tree watch.
type treeItem struct {
	resync bool
	xid    uint64
}

type treeWatch struct {
	dir string
	q   *watch.Queue[treeItem]
}

// Watch returns a channel that first receives the current pair at key (an
// empty pair with only Key set when the key does not exist), then one pair
// per change, in order: the new pair after a write, an empty pair (nil
// Value, LastIndex of the deletion) after a delete or an expiry. Existing
// keys always have a non-nil Value. Changes arrive by LISTEN/NOTIFY; the
// initial read's snapshot tells which notifications it already reflects.
// Writers never wait for the reader. The channel closes when ctx is done or
// the handle is closed. After the listener reconnects, the current state is
// delivered if it differs from the last pair delivered (a deletion seen
// that way has LastIndex 0): changes in between may have been missed.
func (s *Store) Watch(ctx context.Context, key string, _ *store.ReadOptions) (<-chan *store.KVPair, error) {
	k, c, done, err := s.beginKey(ctx, key)
	if err != nil {
		return nil, err
	}
	defer done()

	w := &keyWatch{key: k, q: watch.NewQueue[keyItem]()}

	// Register before reading, so that no change committed after the read
	// can be missed.
	s.mu.Lock()
	set := s.keyWatches[k]
	if set == nil {
		set = make(map[*keyWatch]struct{})
		s.keyWatches[k] = set
	}
	set[w] = struct{}{}
	s.mu.Unlock()

	first, snap, err := s.readKey(c, k)
	if err != nil {
		s.dropKeyWatch(w)

		return nil, s.fail(ctx, "watch", err)
	}

	out := make(chan *store.KVPair)
	if !s.spawn(func() { s.runKeyWatch(ctx, w, first, snap, out) }) {
		s.dropKeyWatch(w)

		return nil, errClosed
	}

	return out, nil
}

func (s *Store) dropKeyWatch(w *keyWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()

	set := s.keyWatches[w.key]
	delete(set, w)

	if len(set) == 0 {
		delete(s.keyWatches, w.key)
	}
}

// runWatch delivers a watch on out until ctx is done or the store
// closes, then closes out and drops the watch (drop): first, then, for
// each batch of items taken from q, whatever handle sends of them. handle
// returns false when the watch must end.
func runWatch[I, T any](s *Store, ctx context.Context, q *watch.Queue[I], drop func(), first T, out chan<- T, handle func(wctx context.Context, items []I) bool) {
	wctx, cancel := s.watchContext(ctx)
	defer cancel()
	defer drop()
	defer close(out)

	if !watch.Send(wctx, out, first) {
		return
	}

	for {
		items := q.Take(wctx.Done())
		if items == nil || !handle(wctx, items) {
			return
		}
	}
}

func (s *Store) runKeyWatch(ctx context.Context, w *keyWatch, last *store.KVPair, snap snapshot, out chan<- *store.KVPair) {
	runWatch(s, ctx, w.q, func() { s.dropKeyWatch(w) }, last, out, func(wctx context.Context, items []keyItem) bool {
		p, ok := s.keyItemsPair(wctx, w.key, items, &snap, last)
		if !ok {
			return wctx.Err() == nil
		}

		if !watch.Send(wctx, out, p) {
			return false
		}
		last = p

		return true
	})
}

// keyItemsPair returns the pair to deliver for a batch of items, if any.
// Notifications are hints: the row is read again (once for the batch)
// unless the last read already reflects every one of them, and what the
// read returns is delivered if it differs from last. A deletion takes the
// highest index the batch's deletion notifications give, only when the
// read shows the key gone after last showed it present (else LastIndex 0):
// the index is a label, the deletion itself is what the read saw.
func (s *Store) keyItemsPair(ctx context.Context, key string, items []keyItem, snap *snapshot, last *store.KVPair) (*store.KVPair, bool) {
	stale := false
	var delIdx uint64

	for _, it := range items {
		switch {
		case it.resync:
			stale = true
		case !snap.visible(it.xid):
			stale = true
			if it.del {
				delIdx = max(delIdx, it.idx)
			}
		}
	}

	if !stale {
		return nil, false // the last read already reflects them
	}

	var p *store.KVPair
	err := retry(ctx, func() error {
		cur, sn, err := s.readKey(ctx, key)
		if err == nil {
			p, *snap = cur, sn
		}

		return err
	})
	if err != nil || samePair(last, p) {
		return nil, false
	}

	if p.Value == nil && last.Value != nil && delIdx > last.LastIndex {
		p.LastIndex = delIdx
	}

	return p, true
}

// readKey reads key and the snapshot of the read.
func (s *Store) readKey(ctx context.Context, k string) (*store.KVPair, snapshot, error) {
	if batchable(k) {
		p, snapText, err := s.readBatched(ctx, k)
		if err != nil {
			return nil, snapshot{}, err
		}

		snap, err := parseSnapshot(snapText)
		if err != nil {
			return nil, snapshot{}, err
		}

		return p, snap, nil
	}

	var (
		snapText string
		value    []byte
		idx      *int64
	)

	if err := s.queryRow(ctx, s.q.watchKey, []any{k}, &snapText, &value, &idx); err != nil {
		return nil, snapshot{}, err
	}

	snap, err := parseSnapshot(snapText)
	if err != nil {
		return nil, snapshot{}, err
	}

	if idx == nil {
		return &store.KVPair{Key: k}, snap, nil
	}

	return &store.KVPair{Key: k, Value: nonNil(value), LastIndex: uint64(*idx)}, snap, nil
}

// WatchTree returns a channel that first receives the current children of
// directory (as List, an empty slice when there are none), then the full
// list again after changes below directory, deletions and expiries
// included; changes that arrive together give one list. Delivery follows
// the same rules as Watch.
func (s *Store) WatchTree(ctx context.Context, directory string, _ *store.ReadOptions) (<-chan []*store.KVPair, error) {
	c, done, err := s.beginCall(ctx)
	if err != nil {
		return nil, err
	}
	defer done()

	w := &treeWatch{dir: kv.NormalizeKey(directory), q: watch.NewQueue[treeItem]()}

	s.mu.Lock()
	s.treeWatches[w] = struct{}{}
	s.mu.Unlock()

	first, snap, err := s.readTree(c, w.dir)
	if err != nil {
		s.dropTreeWatch(w)

		return nil, s.fail(ctx, "watch tree", err)
	}

	out := make(chan []*store.KVPair)
	if !s.spawn(func() { s.runTreeWatch(ctx, w, first, snap, out) }) {
		s.dropTreeWatch(w)

		return nil, errClosed
	}

	return out, nil
}

func (s *Store) dropTreeWatch(w *treeWatch) {
	s.mu.Lock()
	delete(s.treeWatches, w)
	s.mu.Unlock()
}

func (s *Store) runTreeWatch(ctx context.Context, w *treeWatch, list []*store.KVPair, snap snapshot, out chan<- []*store.KVPair) {
	runWatch(s, ctx, w.q, func() { s.dropTreeWatch(w) }, list, out, func(wctx context.Context, items []treeItem) bool {
		stale := false
		for _, it := range items {
			if it.resync || !snap.visible(it.xid) {
				stale = true

				break
			}
		}

		if !stale {
			return true
		}

		err := retry(wctx, func() error {
			cur, sn, err := s.readTree(wctx, w.dir)
			if err == nil {
				list, snap = cur, sn
			}

			return err
		})

		return err == nil && watch.Send(wctx, out, list)
	})
}

// readTree lists the keys below dir and returns the snapshot of the read.
func (s *Store) readTree(ctx context.Context, dir string) ([]*store.KVPair, snapshot, error) {
	sql, args := s.q.watchAll, []any(nil)
	if dir != "" {
		lo, hi := childRange(dir)
		sql, args = s.q.watchTree, []any{lo, hi}
	}

	var (
		list     = []*store.KVPair{}
		snapText string
	)

	err := s.queryAll(ctx, sql, args, func(rows pgx.Rows) error {
		var (
			k     *string
			value []byte
			idx   *int64
		)

		if err := rows.Scan(&snapText, &k, &value, &idx); err != nil {
			return err
		}

		if k != nil && idx != nil {
			list = append(list, &store.KVPair{Key: *k, Value: nonNil(value), LastIndex: uint64(*idx)})
		}

		return nil
	})
	if err != nil {
		return nil, snapshot{}, err
	}

	snap, err := parseSnapshot(snapText)
	if err != nil {
		return nil, snapshot{}, err
	}

	return list, snap, nil
}

// watchContext returns a context canceled with ctx or when the handle
// closes.
func (s *Store) watchContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return watch.Joined(ctx, s.ctx)
}

// retry calls f until it succeeds or ctx is done (then it returns
// ctx.Err()), backing off from 50ms to 2s between attempts.
func retry(ctx context.Context, f func() error) error {
	backoff := 50 * time.Millisecond

	for {
		err := f()
		if err == nil {
			return nil
		}

		if ctx.Err() != nil {
			return ctx.Err()
		}

		if !watch.Sleep(ctx, backoff) {
			return ctx.Err()
		}

		backoff = min(2*backoff, 2*time.Second)
	}
}
