package consul

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/watch"
)

// Watch sends the pair at key first (an empty pair, nil Value, when the key
// does not exist), then the new pair after each change: the new value
// after a write, an empty pair after a delete (LastIndex: the index of the
// reply that showed it gone, or 0 from the first read, which has none).
// Changes in quick succession arrive as one (the latest state), and a
// reader slower than the changes gets the latest state when it reads
// again, never a state older than one it was sent.
//
// The first pair comes from a consistent read of the key (batched with
// concurrent reads). The changes come from the store's watch hub: one
// consistent blocking query, shared by every Watch of the store, on the
// longest common prefix of the watched keys (see the package
// documentation for its cost). Watches hold no connection of their own,
// so thousands can run on one store.
//
// The channel closes when ctx ends, the store closes, the first read
// fails, or the shared query has failed for watchRetryFor (3s) or seen the
// index go backwards (a restored snapshot, an agent restarted without its
// data: after a failed query the next one does not block, so that this is
// seen at once): watch again then.
func (s *kv) Watch(ctx context.Context, key string, _ *store.ReadOptions) (<-chan *store.KVPair, error) {
	k, err := normalize(key)
	if err != nil {
		return nil, err
	}
	ch := make(chan *store.KVPair)
	wctx, cancel := s.merge(ctx)
	w := &watcher{key: k, ready: make(chan struct{}, 1), ended: make(chan struct{})}
	if !s.hub.add(w, func() {
		defer cancel()
		s.runWatch(wctx, w, ch)
	}) {
		cancel()
		return nil, errClosed
	}
	return ch, nil
}

// WatchesEndWithContext reports that Watch's channels close once their
// context ends, with no sender waiting past that
// (guard.ContextBoundWatches).
func (s *kv) WatchesEndWithContext() bool { return true }

// runWatch is a watcher's goroutine: it reads the key once, then hands the
// reader what the hub offers.
func (s *kv) runWatch(ctx context.Context, w *watcher, ch chan<- *store.KVPair) {
	defer close(ch)
	defer s.hub.remove(w)
	// The hub knows the key already: a change after this read has a
	// higher index than any reply the hub has had, so its query returns
	// with it.
	rctx, rcancel := context.WithTimeout(ctx, s.requestTimeout)
	p, err := s.get(rctx, w.key, true)
	rcancel()
	if err != nil {
		return
	}
	if w.offer(observation{pair: p, epoch: s.hub.currentEpoch(), first: true}) {
		s.hub.confirm(w)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.ended:
			return
		case <-w.ready:
		}
		if ev := w.take(); ev != nil && !watch.Send(ctx, ch, ev) {
			return
		}
	}
}

// observation is a state of a key, read from Consul.
type observation struct {
	pair  *api.KVPair // nil: the key does not exist
	index uint64      // the reply's X-Consul-Index; 0: unknown
	epoch uint64      // the hub query's epoch; for the first read, the epoch when it returned
	first bool        // the watcher's first read
}

// watcher is one Watch: the state it last accepted, and the pair waiting
// for its reader (latest-value coalescing: the hub never waits for it).
type watcher struct {
	key     string
	ready   chan struct{} // capacity 1: pending was set
	ended   chan struct{} // closed by the hub when it gives up
	endOnce sync.Once

	mu      sync.Mutex
	seen    bool   // a state was accepted
	exists  bool   // in the state accepted
	version uint64 // its ModifyIndex; missing: the index that showed it, 0 if unknown
	// trust: the state from a hub query started after epoch trustAfter is
	// newer than everything the watcher has seen, and taken as it is.
	trust      bool
	trustAfter uint64
	pending    *store.KVPair
}

func (w *watcher) end() { w.endOnce.Do(func() { close(w.ended) }) }

// offer hands the watcher a state of its key. States come from different
// reads (the watcher's first, the hub's queries), not necessarily in
// order: a state is accepted only if it is newer than the one accepted
// before, and sent only if it differs. It reports true when it cannot
// tell: the hub must then run a query soon, whose reply decides.
//
// The index of a reply is at least that of every write (deletes included:
// Consul keeps tombstones) to the keys it covers, and at most the Raft
// index the read was served at. So, for a key last seen existing at
// ModifyIndex m, or missing in a reply of index r: it exists at m' > m only
// in a later state (ModifyIndex never repeats, even across a delete and a
// re-create); it is missing in a reply of index i only after a delete if
// i >= m, and in an older read if i < m; it exists at m' > r only after
// being written again, and m' <= r is an older read. The first read, a
// transaction, has no index: a missing key's order against the hub's
// replies is then known only for queries started after it returned.
func (w *watcher) offer(o observation) (confirm bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.seen:
		w.accept(o)
		if o.pair == nil && o.index == 0 {
			w.trust, w.trustAfter = true, o.epoch
		}
		return false
	case !o.first && w.trust && o.epoch > w.trustAfter:
		w.trust = false
		if (o.pair != nil) != w.exists || o.pair != nil && o.pair.ModifyIndex != w.version {
			w.accept(o)
		} else if o.pair == nil {
			w.version = o.index
		}
		return false
	}
	switch {
	case o.pair != nil && w.exists:
		if o.pair.ModifyIndex > w.version {
			w.accept(o)
		}
	case o.pair != nil && w.version == 0: // missing, index unknown
		return true
	case o.pair != nil:
		if o.pair.ModifyIndex > w.version {
			w.accept(o)
		}
	case !w.exists: // missing, still
		if w.version > 0 {
			w.version = max(w.version, o.index)
		}
	case o.index == 0: // the first read, missing, after the hub showed it
		if !w.trust || w.trustAfter < o.epoch {
			w.trust, w.trustAfter = true, o.epoch
		}
		return true
	case o.index >= w.version:
		w.accept(o)
	}
	return false
}

// accept makes o the watcher's state and the pair its reader gets next.
func (w *watcher) accept(o observation) {
	var ev *store.KVPair
	if o.pair != nil {
		w.exists, w.version = true, o.pair.ModifyIndex
		ev = pairOf(o.pair)
	} else {
		w.exists, w.version = false, o.index
		ev = &store.KVPair{Key: w.key, LastIndex: o.index}
	}
	w.seen, w.pending = true, ev
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// take returns the pair waiting for the reader, if any.
func (w *watcher) take() *store.KVPair {
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := w.pending
	w.pending = nil
	return ev
}

// hub runs the one blocking query serving every watcher of a store, while
// there are watchers. The query lists the longest common prefix of the
// watched keys, cut after a "/" (the key itself when only one is watched),
// so that keys added in the same directories do not widen it. When it
// returns, every watcher of a key it covers is offered the key's state in
// the reply. A key added outside the prefix restarts the query on a wider
// one at once; a narrower prefix is taken at the next reply. Queries are
// paced by the size of their replies (50µs an entry, up to 250ms between
// two), so that a busy prefix costs the client and the agent a bounded
// share of their time.
type hub struct {
	s    *kv
	wake chan struct{} // capacity 1: restart may have been set

	mu        sync.Mutex
	running   bool // the hub's goroutine runs
	keys      map[string]*entry
	epoch     uint64 // counts the queries started
	querying  bool   // query epoch is in flight on prefix
	prefix    string
	restart   bool // the query in flight must stop: a key outside prefix, none left, or a watcher needs a fresh reply
	immediate bool // the next query must not block: a watcher needs a fresh reply
	round     uint64
}

// entry is a watched key.
type entry struct {
	watchers map[*watcher]struct{}
	round    uint64 // the last reply the key was in
}

func (h *hub) init(s *kv) {
	h.s, h.wake, h.keys = s, make(chan struct{}, 1), map[string]*entry{}
}

func (h *hub) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *hub) currentEpoch() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.epoch
}

// add registers w and starts run, w's goroutine, and the hub's if it is
// not running. It reports false once the store is closing.
func (h *hub) add(w *watcher, run func()) bool {
	return h.s.startTask(func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		e := h.keys[w.key]
		if e == nil {
			e = &entry{watchers: map[*watcher]struct{}{}}
			h.keys[w.key] = e
			if h.querying && !strings.HasPrefix(w.key, h.prefix) {
				h.restart = true
				h.signal()
			}
		}
		e.watchers[w] = struct{}{}
		if !h.running {
			h.running = true
			h.s.tasks.Go(h.run) // under startTask's lock, as run is
		}
		return true
	}, run)
}

// remove forgets w. The last watcher gone stops the hub.
func (h *hub) remove(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.keys[w.key]
	if e == nil {
		return
	}
	if _, ok := e.watchers[w]; !ok {
		return
	}
	delete(e.watchers, w)
	if len(e.watchers) == 0 {
		delete(h.keys, w.key)
		if len(h.keys) == 0 && h.querying {
			h.restart = true
			h.signal()
		}
	}
}

// confirm asks for a reply from a query started after w's first read.
func (h *hub) confirm(w *watcher) {
	w.mu.Lock()
	trust, after := w.trust, w.trustAfter
	w.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.immediate = true
	if trust && h.querying && h.epoch <= after {
		h.restart = true
		h.signal()
	}
}

// fail ends every watcher: their channels close, and their readers poll.
func (h *hub) fail() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, e := range h.keys {
		for w := range e.watchers {
			w.end()
		}
		delete(h.keys, k)
	}
}

// commonPrefix returns the prefix the hub's query lists (see hub).
func commonPrefix(keys map[string]*entry) string {
	var p string
	first := true
	for k := range keys {
		if first {
			p, first = k, false
			continue
		}
		n := 0
		for n < len(p) && n < len(k) && p[n] == k[n] {
			n++
		}
		p = p[:n]
	}
	if len(keys) > 1 {
		p = p[:strings.LastIndexByte(p, '/')+1]
	}
	return p
}

// run is the hub's goroutine: it queries while there are watchers.
func (h *hub) run() {
	s := h.s
	var (
		index   uint64    // of the last reply: the next WaitIndex
		last    string    // the prefix of the last reply
		have    bool      // whether there was one
		next    time.Time // the next query starts no sooner (pacing)
		failing time.Time // when the current run of failures began
		backoff time.Duration
		probe   bool // a query failed since the last reply: the next does not block
	)
	for {
		if d := time.Until(next); d > 0 {
			watch.Sleep(s.ctx, d)
		}
		h.mu.Lock()
		if len(h.keys) == 0 || s.ctx.Err() != nil {
			h.running, h.querying = false, false
			h.mu.Unlock()
			return
		}
		prefix := commonPrefix(h.keys)
		wait := index
		if h.immediate || !have || probe {
			// After a failure the server may be another one, restarted
			// without its data (or from a snapshot): its index may be
			// below the last one seen, and a query waiting for an index
			// it has not reached would hang for watchWait, the watchers
			// silent, while the key changes. A query that does not
			// block tells at once (the index went backwards: see
			// below).
			wait = 0
		}
		h.epoch++
		epoch := h.epoch
		h.querying, h.prefix, h.restart, h.immediate = true, prefix, false, false
		h.mu.Unlock()

		// Whatever the prefix, the last index is a valid WaitIndex: a
		// change to a watched key after its watcher's first read has a
		// higher one. On another prefix the reply may come at once (its
		// keys have higher indexes) or carry a lower index (a narrower
		// prefix): both are fine.
		start := time.Now()
		ps, meta, restarted, err := h.query(prefix, wait)
		h.mu.Lock()
		h.querying = false
		h.mu.Unlock()
		switch {
		case restarted || s.ctx.Err() != nil:
			continue
		case err != nil:
			probe = true
			if failing.IsZero() {
				failing = start
			}
			if time.Since(failing) >= watchRetryFor {
				h.fail()
				failing, backoff, have = time.Time{}, 0, false
				continue
			}
			backoff = min(max(2*backoff, 50*time.Millisecond), time.Second)
			next = time.Now().Add(backoff)
			continue
		}
		if wait != 0 {
			// Only a blocking query that worked ends a run of failures:
			// an agent whose blocking queries fail while plain reads work
			// (a proxy that refuses long polls) must not make the hub
			// alternate the two at the first backoff step for ever.
			failing, backoff = time.Time{}, 0
		}
		probe = false
		same := have && prefix == last
		if same && meta.LastIndex < index {
			// The index went backwards (a snapshot restored, tombstones
			// reaped): the watchers' states may be ahead of the store's.
			// They start again from a fresh read.
			h.fail()
			have = false
			continue
		}
		h.deliver(prefix, ps, meta.LastIndex, epoch)
		next = start.Add(min(time.Duration(len(ps))*watchPacePerKey, watchPaceMax))
		if same && wait != 0 && meta.LastIndex == index && time.Since(start) < 10*time.Millisecond {
			// Back at once without news: do not let a misbehaving
			// server make the hub spin.
			next = time.Now().Add(100 * time.Millisecond)
		}
		index, last, have = meta.LastIndex, prefix, true
	}
}

// query runs one consistent blocking query on prefix (not blocking if
// index is 0). It returns early, restarted, when the query must stop.
func (h *hub) query(prefix string, index uint64) (ps api.KVPairs, meta *api.QueryMeta, restarted bool, err error) {
	ctx, cancel := context.WithTimeout(h.s.ctx, watchWait*17/16+h.s.requestTimeout)
	defer cancel()
	q := (&api.QueryOptions{RequireConsistent: true, WaitIndex: index, WaitTime: watchWait}).WithContext(ctx)
	type reply struct {
		ps   api.KVPairs
		meta *api.QueryMeta
		err  error
	}
	done := make(chan reply, 1)
	go func() {
		ps, meta, err := h.s.watchClient.KV().List(prefix, q)
		done <- reply{ps, meta, err}
	}()
	for {
		select {
		case r := <-done:
			return r.ps, r.meta, false, r.err
		case <-h.wake:
			h.mu.Lock()
			restart := h.restart
			h.mu.Unlock()
			if restart {
				cancel()
				<-done
				return nil, nil, true, nil
			}
		}
	}
}

// deliver offers the watchers of the keys prefix covers their state in a
// reply of the given index and epoch.
func (h *hub) deliver(prefix string, ps api.KVPairs, index, epoch uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.round++
	confirm := false
	for _, p := range ps {
		if e := h.keys[p.Key]; e != nil {
			e.round = h.round
			for w := range e.watchers {
				confirm = w.offer(observation{pair: p, index: index, epoch: epoch}) || confirm
			}
		}
	}
	for k, e := range h.keys {
		if e.round == h.round || !strings.HasPrefix(k, prefix) {
			continue
		}
		for w := range e.watchers {
			confirm = w.offer(observation{index: index, epoch: epoch}) || confirm
		}
	}
	if confirm {
		h.immediate = true
	}
}
