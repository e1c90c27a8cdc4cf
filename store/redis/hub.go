package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"
	goredis "github.com/redis/go-redis/v9"

	"github.com/leadership-go/leadership/store/internal/watch"
)

// errHubClosed is returned by Watch and WatchTree on a closed store.
var errHubClosed = fmt.Errorf("redis: store closed: %w", goredis.ErrClosed)

const (
	// healthInterval is the silence after which the subscription
	// connection is pinged, and after which an unanswered ping declares
	// it dead (a hung server or a partition).
	healthInterval = 3 * time.Second

	// batchSize bounds the keys of one MGET and the channels of one
	// SUBSCRIBE.
	batchSize = 500

	// maxBackoff bounds the pause between retries after errors.
	maxBackoff = time.Second
)

// reader reads the current state of watched keys for the hub.
type reader interface {
	// get returns one pair per key, in order: {Key} alone when the key
	// does not exist.
	get(ctx context.Context, keys []string) ([]*store.KVPair, error)
	// list returns the pairs under dir, as List does; an empty slice when
	// there are none.
	list(ctx context.Context, dir string) ([]*store.KVPair, error)
}

// hub runs every Watch and WatchTree of one store over one Pub/Sub
// connection. Each watched key is one SUBSCRIBE to its keyspace channel
// (each watched directory one PSUBSCRIBE), shared by its watchers and
// dropped with the last of them. Three goroutines, started with the first
// watch, do the work:
//
//   - receive reads the connection: a subscription's confirmation (also
//     after a reconnection, when go-redis subscribes again) and every
//     notification mark the subscription dirty. It pings the connection
//     after healthInterval of silence and replaces it by a new one when
//     the ping is not answered within another healthInterval.
//   - subscribe sends SUBSCRIBE and UNSUBSCRIBE for the subscriptions
//     watchers add and drop.
//   - fetch reads the dirty keys, in batches and one batch at a time, and
//     offers each watcher the state read: so every watcher sees states in
//     the order of the reads, never an older one after a newer one.
//
// A watcher's channel has a buffer of one, replaced when the reader has
// not taken it yet: a slow reader gets the latest state, never blocks the
// hub, and needs no goroutine of its own. Its channel is closed when its
// context ends (context.AfterFunc) or the hub closes.
type hub struct {
	client  *goredis.Client
	prefix  string // the keyspace channel prefix, __keyspace@<db>__:
	read    reader
	timeout time.Duration // bounds each subscription command, read and ping
	health  time.Duration // see healthInterval

	ctx       context.Context // done when the hub closes
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	kickSub   chan struct{}
	kickFetch chan struct{}

	mu      sync.Mutex
	closed  bool
	started bool
	ps      *goredis.PubSub // replaced when declared dead
	subs    map[subName]*sub
	drop    []subName         // to unsubscribe from, on ps
	unsent  []*sub            // to subscribe on ps, in order (subs since removed or sent are skipped)
	pending map[*sub]struct{} // subs with a read due
}

// subName names a subscription: a channel, or a pattern for a tree.
type subName struct {
	name string
	tree bool
}

// sub is one subscription and its watchers.
type sub struct {
	subName
	key       string // the key, or the directory for a tree
	watchers  map[*watcher]struct{}
	sent      bool // subscribed on the current ps
	confirmed bool // a confirmation came: a read now shows any later change
	dirty     bool // every watcher is due a read
}

// watcher is one Watch or WatchTree channel.
type watcher struct {
	s     *sub
	fresh bool // due its first state
	gone  bool
	offer func(v any) // never blocks; called with hub.mu held
	close func()      // called once, with hub.mu held
	stop  func() bool // unregisters the context.AfterFunc
}

func newHub(client *goredis.Client, db int, read reader, timeout time.Duration) *hub {
	if timeout <= 0 {
		timeout = defaultRequestTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &hub{
		client:    client,
		prefix:    fmt.Sprintf("__keyspace@%d__:", db),
		read:      read,
		timeout:   timeout,
		health:    healthInterval,
		ctx:       ctx,
		cancel:    cancel,
		kickSub:   make(chan struct{}, 1),
		kickFetch: make(chan struct{}, 1),
		subs:      make(map[subName]*sub),
		pending:   make(map[*sub]struct{}),
	}
}

// watchKey is Watch on the hub; key is normalized.
func watchKey(h *hub, ctx context.Context, key string) (<-chan *store.KVPair, error) {
	return watchOn[*store.KVPair](h, ctx, subName{h.prefix + key, false}, key)
}

// watchTree is WatchTree on the hub; dir is normalized.
func watchTree(h *hub, ctx context.Context, dir string) (<-chan []*store.KVPair, error) {
	return watchOn[[]*store.KVPair](h, ctx, subName{globEscape(h.prefix+dir) + "*", true}, dir)
}

func watchOn[T any](h *hub, ctx context.Context, name subName, key string) (<-chan T, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(chan T, 1)
	w := &watcher{fresh: true}
	w.offer = func(v any) {
		t := v.(T)
		select {
		case out <- t:
			return
		default:
		}
		select { // replace the state the reader has not taken yet
		case <-out:
		default:
		}
		select {
		case out <- t:
		default:
		}
	}
	w.close = func() { close(out) }
	if err := h.add(ctx, w, name, key); err != nil {
		return nil, err
	}
	return out, nil
}

// add registers w, subscribing if it is the first watcher of name.
func (h *hub) add(ctx context.Context, w *watcher, name subName, key string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHubClosed
	}
	if !h.started {
		h.started = true
		h.ps = h.client.Subscribe(h.ctx) // connects when first used
		h.wg.Go(h.receive)
		h.wg.Go(h.subscribe)
		h.wg.Go(h.fetch)
	}
	s := h.subs[name]
	if s == nil {
		s = &sub{subName: name, key: key, watchers: make(map[*watcher]struct{})}
		h.subs[name] = s
		h.unsent = append(h.unsent, s)
		kick(h.kickSub)
	}
	w.s = s
	s.watchers[w] = struct{}{}
	if s.confirmed {
		// Subscribed already: a read now is the current state. Otherwise
		// the confirmation will bring the read.
		h.pending[s] = struct{}{}
		kick(h.kickFetch)
	}
	w.stop = context.AfterFunc(ctx, func() { h.remove(w) })
	return nil
}

// remove closes w's channel and drops its subscription if it was the last
// watcher.
func (h *hub) remove(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if w.gone {
		return
	}
	w.gone = true
	w.close()
	s := w.s
	delete(s.watchers, w)
	if len(s.watchers) > 0 {
		return
	}
	delete(h.subs, s.subName)
	delete(h.pending, s)
	if s.sent {
		h.drop = append(h.drop, s.subName)
		kick(h.kickSub)
	}
}

// close ends every watch and the hub's goroutines; the returned channel is
// closed once they have ended.
func (h *hub) close() <-chan struct{} {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		h.cancel()
		for _, s := range h.subs {
			for w := range s.watchers {
				w.stop()
				w.gone = true
				w.close()
			}
		}
		h.subs, h.pending, h.drop = nil, nil, nil
	}
	ps := h.ps
	h.mu.Unlock()
	if ps != nil {
		_ = ps.Close() // unblocks receive
	}
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	return done
}

func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func nextBackoff(d time.Duration) time.Duration {
	return min(max(2*d, 50*time.Millisecond), maxBackoff)
}

// current returns the Pub/Sub connection, or nil once the hub is closed.
func (h *hub) current() *goredis.PubSub {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	return h.ps
}

// receive reads the Pub/Sub connection until the hub closes.
func (h *hub) receive() {
	var (
		pinged  bool
		backoff time.Duration
	)
	for {
		ps := h.current()
		if ps == nil {
			return
		}
		// go-redis reconnects (and subscribes again) by itself after an
		// error other than a timeout; ReceiveTimeout dials if needed.
		msg, err := ps.ReceiveTimeout(h.ctx, h.health)
		if h.ctx.Err() != nil {
			return
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if pinged {
					// No answer to the ping: a hung connection, which
					// go-redis would keep for ever.
					h.replace(ps)
					pinged = false
					continue
				}
				ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
				pinged = ps.Ping(ctx) == nil
				cancel()
				continue
			}
			pinged = false
			backoff = nextBackoff(backoff)
			if !watch.Sleep(h.ctx, backoff) {
				return
			}
			continue
		}
		pinged, backoff = false, 0
		switch m := msg.(type) {
		case *goredis.Subscription:
			switch m.Kind {
			case "subscribe":
				h.confirm(subName{m.Channel, false})
			case "psubscribe":
				h.confirm(subName{m.Channel, true})
			}
		case *goredis.Message:
			if m.Pattern != "" {
				h.event(subName{m.Pattern, true})
			} else {
				h.event(subName{m.Channel, false})
			}
		}
	}
}

// confirm marks a subscription confirmed (again, after a reconnection):
// every watcher is due a read.
func (h *hub) confirm(name subName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.subs[name]; s != nil {
		s.confirmed, s.dirty = true, true
		h.pending[s] = struct{}{}
		kick(h.kickFetch)
	}
}

// event marks a subscription dirty after a notification.
func (h *hub) event(name subName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.subs[name]; s != nil && s.confirmed {
		s.dirty = true
		h.pending[s] = struct{}{}
		kick(h.kickFetch)
	}
}

// replace closes a dead Pub/Sub connection and starts a new one, on which
// subscribe sends every subscription again.
func (h *hub) replace(old *goredis.PubSub) {
	h.mu.Lock()
	if h.closed || h.ps != old {
		h.mu.Unlock()
		return
	}
	h.ps = h.client.Subscribe(h.ctx)
	clear(h.unsent)
	h.unsent = h.unsent[:0]
	for _, s := range h.subs {
		s.sent, s.confirmed = false, false
		h.unsent = append(h.unsent, s)
	}
	h.drop = nil
	kick(h.kickSub)
	h.mu.Unlock()
	_ = old.Close()
}

// awake waits for kick and reports true, or false once the hub closes.
func (h *hub) awake(kick <-chan struct{}) bool {
	select {
	case <-h.ctx.Done():
		return false
	case <-kick:
		return true
	}
}

// subscribe sends the subscription changes until the hub closes.
func (h *hub) subscribe() {
	var backoff time.Duration
	for h.awake(h.kickSub) {
		for {
			h.mu.Lock()
			if h.closed {
				h.mu.Unlock()
				return
			}
			ps := h.ps
			var drop, add [2][]string // [channels, patterns]
			for _, n := range h.drop {
				drop[b2i(n.tree)] = append(drop[b2i(n.tree)], n.name)
			}
			h.drop = nil
			// From the list of those not sent, not a scan of every
			// subscription: 100,000 watches are added one batch at a time.
			taken := 0
			for _, s := range h.unsent {
				if len(add[0])+len(add[1]) >= batchSize {
					break
				}
				taken++
				if h.subs[s.subName] == s && !s.sent {
					s.sent = true
					add[b2i(s.tree)] = append(add[b2i(s.tree)], s.name)
				}
			}
			clear(h.unsent[:taken])
			h.unsent = h.unsent[taken:]
			h.mu.Unlock()
			if len(drop[0])+len(drop[1])+len(add[0])+len(add[1]) == 0 {
				break
			}
			ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
			// Errors on UNSUBSCRIBE are ignored: go-redis forgets the
			// channels at once, and a failed write means a new
			// connection, without them.
			if len(drop[0]) > 0 {
				_ = ps.Unsubscribe(ctx, drop[0]...)
			}
			if len(drop[1]) > 0 {
				_ = ps.PUnsubscribe(ctx, drop[1]...)
			}
			var err error
			if len(add[0]) > 0 {
				err = ps.Subscribe(ctx, add[0]...)
			}
			if len(add[1]) > 0 {
				err = errors.Join(err, ps.PSubscribe(ctx, add[1]...))
			}
			cancel()
			if err == nil {
				backoff = 0
				continue
			}
			// Send them again later: go-redis may have reconnected
			// before recording them, and would not subscribe them on
			// its new connection. A duplicate SUBSCRIBE is harmless.
			h.mu.Lock()
			if h.ps == ps {
				for i, names := range add {
					for _, n := range names {
						if s := h.subs[subName{n, i == 1}]; s != nil && s.sent {
							s.sent = false
							h.unsent = append(h.unsent, s)
						}
					}
				}
			}
			h.mu.Unlock()
			backoff = nextBackoff(backoff)
			if !watch.Sleep(h.ctx, backoff) {
				return
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// due is one subscription's read in a batch, and the watchers it is for.
type due struct {
	s   *sub
	all bool // s was dirty: every watcher; else only the fresh ones
	ws  []*watcher
}

// fetch reads the pending subscriptions until the hub closes.
func (h *hub) fetch() {
	var backoff time.Duration
	for h.awake(h.kickFetch) {
		for {
			batch := h.takePending()
			if len(batch) == 0 {
				break
			}
			vals, err := h.readBatch(batch)
			h.mu.Lock()
			if h.closed {
				h.mu.Unlock()
				return
			}
			if err != nil {
				h.requeue(batch)
				h.mu.Unlock()
				backoff = nextBackoff(backoff)
				if !watch.Sleep(h.ctx, backoff) {
					return
				}
				continue
			}
			backoff = 0
			for i, d := range batch {
				for _, w := range d.ws {
					if !w.gone {
						w.offer(vals[i])
					}
				}
			}
			h.mu.Unlock()
		}
	}
}

// takePending returns up to batchSize confirmed subscriptions with a read
// due, and clears their flags.
func (h *hub) takePending() []due {
	h.mu.Lock()
	defer h.mu.Unlock()
	var batch []due
	for s := range h.pending {
		if len(batch) == batchSize {
			break
		}
		delete(h.pending, s)
		if !s.confirmed {
			continue // the confirmation will bring it back
		}
		d := due{s: s, all: s.dirty}
		for w := range s.watchers {
			if s.dirty || w.fresh {
				w.fresh = false
				d.ws = append(d.ws, w)
			}
		}
		s.dirty = false
		if len(d.ws) > 0 {
			batch = append(batch, d)
		}
	}
	if len(h.pending) > 0 {
		kick(h.kickFetch)
	}
	return batch
}

// requeue marks a failed batch due again; h.mu is held.
func (h *hub) requeue(batch []due) {
	for _, d := range batch {
		if h.subs[d.s.subName] != d.s {
			continue // dropped meanwhile
		}
		if d.all {
			d.s.dirty = true
		}
		for _, w := range d.ws {
			w.fresh = true
		}
		h.pending[d.s] = struct{}{}
	}
}

// readBatch reads the state of every subscription of batch: the keys with
// one read, the trees one by one.
func (h *hub) readBatch(batch []due) ([]any, error) {
	ctx, cancel := context.WithTimeout(h.ctx, h.timeout)
	defer cancel()
	vals := make([]any, len(batch))
	var keys []string
	var at []int
	for i, d := range batch {
		if d.s.tree {
			pairs, err := h.read.list(ctx, d.s.key)
			if err != nil {
				return nil, err
			}
			vals[i] = pairs
			continue
		}
		keys = append(keys, d.s.key)
		at = append(at, i)
	}
	if len(keys) > 0 {
		pairs, err := h.read.get(ctx, keys)
		if err != nil {
			return nil, err
		}
		for j, p := range pairs {
			vals[at[j]] = p
		}
	}
	return vals, nil
}

// globEscape escapes the characters special in a Redis glob pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '*', '?', '[', ']':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// clientReader reads with the hub's own go-redis client, as kvtools' raw
// codec stores values (the value is the string; LastIndex 0).
type clientReader struct{ c *goredis.Client }

func (r clientReader) get(ctx context.Context, keys []string) ([]*store.KVPair, error) {
	out := make([]*store.KVPair, 0, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		vals, err := r.c.MGet(ctx, keys[:n]...).Result()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			p := &store.KVPair{Key: keys[i]}
			if s, ok := v.(string); ok {
				p.Value = []byte(s)
			}
			out = append(out, p)
		}
		keys = keys[n:]
	}
	return out, nil
}

// list is kvtools' List: the keys starting with dir (SCAN), except dir
// itself and empty values.
func (r clientReader) list(ctx context.Context, dir string) ([]*store.KVPair, error) {
	var keys []string
	iter := r.c.Scan(ctx, 0, globEscape(dir)+"*", batchSize).Iterator()
	for iter.Next(ctx) {
		if k := iter.Val(); k != dir {
			keys = append(keys, k)
		}
	}
	if err := iter.Err(); err != nil {
		return nil, err
	}
	pairs, err := r.get(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]*store.KVPair, 0, len(pairs))
	for _, p := range pairs {
		if len(p.Value) > 0 {
			out = append(out, p)
		}
	}
	return out, nil
}

// storeReader reads through a kvtools store (whatever its codec), for a
// store given to wrap.
type storeReader struct{ s store.Store }

func (r storeReader) get(ctx context.Context, keys []string) ([]*store.KVPair, error) {
	out := make([]*store.KVPair, len(keys))
	for i, k := range keys {
		p, err := r.s.Get(ctx, k, nil)
		switch {
		case errors.Is(err, store.ErrKeyNotFound):
			p = &store.KVPair{Key: k}
		case err != nil:
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func (r storeReader) list(ctx context.Context, dir string) ([]*store.KVPair, error) {
	pairs, err := r.s.List(ctx, dir, nil)
	if errors.Is(err, store.ErrKeyNotFound) {
		return []*store.KVPair{}, nil
	}
	return pairs, err
}
