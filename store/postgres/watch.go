package postgres

import (
	"context"
	"sync"
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

// keyWatch is one Watch: the listener queues items (push), and a worker
// goroutine, started only while items wait, reads the row and feeds the
// channel; an idle watch holds no goroutine.
type keyWatch struct {
	key    string
	s      *Store
	feed   *watch.Feed[*store.KVPair]
	wctx   context.Context // the worker's reads: the caller's context and the handle's
	cancel context.CancelFunc

	mu      sync.Mutex
	items   []keyItem
	started bool // the first pair is in the feed: items may be worked
	working bool // a worker runs
	stopped bool

	// The worker's own, one worker at a time.
	last *store.KVPair // the last pair delivered
	snap snapshot      // of the read that gave last
}

// keyFeedRoom is the buffer of a key watch's channel: while its reader
// keeps up, the worker hands a pair over and ends.
const keyFeedRoom = 4

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

	w := &keyWatch{key: k, s: s}
	w.wctx, w.cancel = s.watchContext(ctx)

	// Register before reading, so that no change committed after the read
	// can be missed: items queue until the first pair is in the feed.
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		w.cancel()

		return nil, errClosed
	}

	w.feed = watch.NewFeed[*store.KVPair](keyFeedRoom, &s.wg, w.stop, ctx, s.ctx)
	set := s.keyWatches[k]
	if set == nil {
		set = make(map[*keyWatch]struct{})
		s.keyWatches[k] = set
	}
	set[w] = struct{}{}
	s.mu.Unlock()

	first, snap, err := s.readKey(c, k)
	if err != nil {
		w.feed.Stop()

		return nil, s.fail(ctx, "watch", err)
	}

	w.begin(first, snap)

	return w.feed.C(), nil
}

// begin feeds the first pair and lets the items queued since work.
func (w *keyWatch) begin(first *store.KVPair, snap snapshot) {
	w.mu.Lock()
	w.last, w.snap = first, snap
	w.feed.Push(first)
	w.started = true
	start := len(w.items) > 0 && !w.working && !w.stopped
	w.working = start
	w.mu.Unlock()

	if start && !w.s.spawn(w.work) {
		w.mu.Lock()
		w.working = false // the handle is closing: the feed stops with it
		w.mu.Unlock()
	}
}

// push queues an item from the listener, with s.mu held, and starts the
// worker if none runs.
func (w *keyWatch) push(it keyItem) {
	w.mu.Lock()
	defer w.mu.Unlock()

	if w.stopped {
		return
	}

	w.items = append(w.items, it)
	if w.started && !w.working {
		w.working = w.s.spawnLocked(w.work)
	}
}

// work turns the queued items into pairs for the feed, and ends once none
// is left.
func (w *keyWatch) work() {
	for {
		w.mu.Lock()
		items := w.items
		w.items = nil

		if len(items) == 0 || w.stopped {
			w.working = false
			w.mu.Unlock()

			return
		}
		w.mu.Unlock()

		if p, ok := w.s.keyItemsPair(w.wctx, w.key, items, &w.snap, w.last); ok {
			w.feed.Push(p)
			w.last = p
		}
	}
}

// stop is the feed's end: the caller's context or the handle's ended.
func (w *keyWatch) stop() {
	w.mu.Lock()
	w.stopped, w.items = true, nil
	w.mu.Unlock()
	w.cancel()
	w.s.dropKeyWatch(w)
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
