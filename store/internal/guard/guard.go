// Package guard wraps a valkeyrie store.Store so that no call outlives its
// context, whatever the backend does with it. Several kvtools backends
// ignore the context of some calls (Consul and ZooKeeper of all of them,
// Redis of socket reads), so a call against a hung server can block for a
// minute or forever; an election engine that must step down or stop on time
// cannot wait for that. The wrapped call runs in a goroutine of its own; when
// the context ends first, the caller gets an error at once and the goroutine
// finishes in the background when the backend returns.
package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// ErrAbandoned is returned, wrapped with the context's error and
// store.ErrNotReachable, for a call that did not finish before its context
// ended. The call's outcome is unknown: a write may still land.
var ErrAbandoned = errors.New("no answer before the deadline")

// Store is a store.Store whose every call returns by its context's deadline,
// or after Timeout when the context has none.
type Store struct {
	inner   store.Store
	timeout time.Duration
	calls   inflight
	closing context.Context // done once Close is called: ends every watch
	close   context.CancelFunc
}

// Wrap guards s. Calls whose context has no deadline get timeout (none if
// timeout is zero).
func Wrap(s store.Store, timeout time.Duration) *Store {
	closing, cancel := context.WithCancel(context.Background())
	return &Store{inner: s, timeout: timeout, closing: closing, close: cancel}
}

// Unwrap returns the guarded store.
func (g *Store) Unwrap() store.Store { return g.inner }

// MinTTL passes on the wrapped store's minimum TTL, if it declares one.
func (g *Store) MinTTL() time.Duration {
	if m, ok := g.inner.(interface{ MinTTL() time.Duration }); ok {
		return m.MinTTL()
	}
	return 0
}

// call runs f under ctx (with the default timeout if ctx has no deadline)
// and returns when f does or when ctx ends, whichever comes first.
func call[T any](g *Store, ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok && g.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
	}
	// Cancelled when the caller returns: a call abandoned at its deadline
	// is told to stop, in case the backend listens.
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	g.calls.Go(func() {
		v, err := f(ctx)
		done <- result{v, err}
	})
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-done: // finished at the same moment: the result stands
			return r.v, r.err
		default:
		}
		return zero, fmt.Errorf("%w (%w): %w", ErrAbandoned, ctx.Err(), store.ErrNotReachable)
	}
}

type none struct{}

// Put is store.Store's Put.
func (g *Store) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	_, err := call(g, ctx, func(ctx context.Context) (none, error) { return none{}, g.inner.Put(ctx, key, value, opts) })
	return err
}

// Get is store.Store's Get.
func (g *Store) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	return call(g, ctx, func(ctx context.Context) (*store.KVPair, error) { return g.inner.Get(ctx, key, opts) })
}

// Delete is store.Store's Delete.
func (g *Store) Delete(ctx context.Context, key string) error {
	_, err := call(g, ctx, func(ctx context.Context) (none, error) { return none{}, g.inner.Delete(ctx, key) })
	return err
}

// Exists is store.Store's Exists.
func (g *Store) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	return call(g, ctx, func(ctx context.Context) (bool, error) { return g.inner.Exists(ctx, key, opts) })
}

// List is store.Store's List.
func (g *Store) List(ctx context.Context, dir string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	return call(g, ctx, func(ctx context.Context) ([]*store.KVPair, error) { return g.inner.List(ctx, dir, opts) })
}

// DeleteTree is store.Store's DeleteTree.
func (g *Store) DeleteTree(ctx context.Context, dir string) error {
	_, err := call(g, ctx, func(ctx context.Context) (none, error) { return none{}, g.inner.DeleteTree(ctx, dir) })
	return err
}

type putResult struct {
	ok   bool
	pair *store.KVPair
}

// AtomicPut is store.Store's AtomicPut. An abandoned call's write may land.
func (g *Store) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	r, err := call(g, ctx, func(ctx context.Context) (putResult, error) {
		ok, pair, err := g.inner.AtomicPut(ctx, key, value, previous, opts)
		return putResult{ok, pair}, err
	})
	return r.ok, r.pair, err
}

// AtomicDelete is store.Store's AtomicDelete.
func (g *Store) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	return call(g, ctx, func(ctx context.Context) (bool, error) { return g.inner.AtomicDelete(ctx, key, previous) })
}

// NewLock is store.Store's NewLock. The lock's own calls are not guarded.
func (g *Store) NewLock(ctx context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	return call(g, ctx, func(ctx context.Context) (store.Locker, error) { return g.inner.NewLock(ctx, key, opts) })
}

// Watch is store.Store's Watch. The returned channel closes when ctx ends
// or the backend's watch closes; a reader that walks away never blocks the
// backend, whose channel is drained until it closes.
func (g *Store) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	b, ok := g.inner.(ContextBoundWatches)
	bound := ok && b.WatchesEndWithContext()
	return watch(g, ctx, bound, func(ctx context.Context) (<-chan *store.KVPair, error) { return g.inner.Watch(ctx, key, opts) })
}

// WatchTree is store.Store's WatchTree, with Watch's guarantees.
func (g *Store) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	return watch(g, ctx, false, func(ctx context.Context) (<-chan []*store.KVPair, error) { return g.inner.WatchTree(ctx, dir, opts) })
}

// ContextBoundWatches is implemented by stores that can promise that the
// channels of their key watches (Watch) close once the watch's context
// ends, and that their senders never wait for a reader past that. When
// WatchesEndWithContext returns true, Watch hands the store's channel out
// as it is, with no goroutine of the guard's own to forward it: a
// goroutine less for every election's watch (docs/scale.md). Close still
// ends every watch, by the context the guard gives it.
type ContextBoundWatches interface {
	WatchesEndWithContext() bool
}

// watch opens a backend watch whose setup is bounded by the default timeout
// and forwards its events until ctx ends, or, if the backend's watch is
// bound to its context, hands its channel out.
func watch[T any](g *Store, ctx context.Context, bound bool, open func(context.Context) (<-chan T, error)) (<-chan T, error) {
	wctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(g.closing, cancel) // Close ends the watch too
	type opened struct {
		ch  <-chan T
		err error
	}
	done := make(chan opened, 1)
	g.calls.Go(func() {
		ch, err := open(wctx)
		done <- opened{ch, err}
	})
	var timeout <-chan time.Time
	if g.timeout > 0 {
		t := time.NewTimer(g.timeout)
		defer t.Stop()
		timeout = t.C
	}
	// An abandoned setup may still open a watch: drain it once it does.
	drainLater := func() {
		g.calls.Go(func() {
			if o := <-done; o.ch != nil {
				drain(o.ch)
			}
		})
	}
	var in <-chan T
	select {
	case o := <-done:
		if o.err != nil || o.ch == nil {
			unhook()
			cancel()
			if o.err == nil {
				o.err = fmt.Errorf("guard: the store opened no watch: %w", store.ErrNotReachable)
			}
			return nil, o.err
		}
		in = o.ch
	case <-wctx.Done():
		unhook()
		cancel()
		drainLater()
		return nil, ctx.Err()
	case <-timeout:
		unhook()
		cancel()
		drainLater()
		return nil, fmt.Errorf("%w (watch setup took over %v): %w", ErrAbandoned, g.timeout, store.ErrNotReachable)
	}
	if bound {
		// Nothing to forward: the backend's channel already closes with
		// wctx, and its senders never wait for a reader past that.
		context.AfterFunc(wctx, func() { unhook() })
		return in, nil
	}
	out := make(chan T)
	g.calls.Go(func() {
		defer unhook()
		defer cancel()
		// On cancel the reader's channel closes first; the backend's is
		// drained afterwards, however long the backend takes to close it.
		stop := func() {
			close(out)
			drain(in)
		}
		for {
			select {
			case v, ok := <-in:
				if !ok {
					close(out)
					return
				}
				select {
				case out <- v:
				case <-wctx.Done():
					stop()
					return
				}
			case <-wctx.Done():
				stop()
				return
			}
		}
	})
	return out, nil
}

func drain[T any](ch <-chan T) {
	for range ch {
	}
}

// Close ends every watch, closes the wrapped store, then waits up to the
// default timeout for calls still running in the background. Calls may
// still be made meanwhile (a store closed under a running candidate).
func (g *Store) Close() error {
	g.close()
	err := g.inner.Close()
	Await(g.calls.idle(), g.timeout)
	return err
}

// inflight counts the goroutines of the calls running in the background.
// Unlike with a sync.WaitGroup, goroutines may start while someone waits
// for the count to drop to zero: a store may be closed while calls are
// still being made on it.
type inflight struct {
	mu      sync.Mutex
	n       int
	waiters chan struct{} // closed when n drops to zero; nil when nobody waits
}

// Go runs f in a goroutine of its own, counted until it returns.
func (c *inflight) Go(f func()) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	go func() {
		defer c.done()
		f()
	}()
}

func (c *inflight) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n == 0 && c.waiters != nil {
		close(c.waiters)
		c.waiters = nil
	}
}

// idle returns a channel closed once no counted goroutine runs.
func (c *inflight) idle() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiters == nil {
		c.waiters = make(chan struct{})
		if c.n == 0 {
			close(c.waiters)
			ch := c.waiters
			c.waiters = nil
			return ch
		}
	}
	return c.waiters
}

// Await waits until done is closed or, when d is positive, until d has
// passed (d <= 0: without bound). It reports whether done was closed.
func Await(done <-chan struct{}, d time.Duration) bool {
	var timeout <-chan time.Time // nil, never ready, without a bound
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-done:
		return true
	case <-timeout:
		return false
	}
}

// AwaitGroup is Await of the end of wg's goroutines: a store's Close
// waits for them so, for a grace period d.
func AwaitGroup(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return Await(done, d)
}
