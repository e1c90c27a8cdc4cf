package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/kvtools/valkeyrie/store"
	goredis "github.com/redis/go-redis/v9"

	"github.com/leadership-go/leadership/store/internal/guard"
)

// ErrCreateUnconfirmed is returned by AtomicPut with previous == nil when
// kvtools reported store.ErrKeyExists but a read shows that the key does
// not exist: kvtools reports every failure of its SETNX (a timeout, a lost
// connection) as ErrKeyExists. The create did not take effect, or was
// undone by a later delete. It matches store.ErrNotReachable.
var ErrCreateUnconfirmed = fmt.Errorf("redis: create not confirmed (SETNX failed or its reply was lost, and the key does not exist): %w", store.ErrNotReachable)

// watchLifetime is how long one kvtools watch is kept before it is
// replaced by a new one (see fixed.Watch).
const watchLifetime = 15 * time.Second

// Wrap applies this package's fixes to a Redis store built elsewhere, for
// instance by valkeyrie.NewStore(ctx, "redis", ...) (kvtools' raw codec):
//
//   - every call returns by its context's deadline, or after
//     requestTimeout when the context has none (kvtools' client ignores
//     context deadlines on its sockets and waits up to 30s), and watches
//     never leak a goroutine on a reader that walks away;
//   - AtomicPut with previous == nil that kvtools reports as
//     store.ErrKeyExists is checked with a Get: ErrKeyExists stands only
//     if the key exists; if it does not, the error is
//     ErrCreateUnconfirmed, and if the Get fails, that error;
//   - each kvtools watch is given a finite lifetime and replaced
//     transparently by a fresh one when it ends, so that a cancelled
//     watch's subscription and goroutines end within that lifetime even if
//     no event comes (kvtools' watch notices its cancellation only at the
//     next event on the key);
//   - errors meaning the server could not be reached (network errors,
//     timeouts, a closed client) also match store.ErrNotReachable; the
//     store's sentinel errors are returned unchanged.
//
// requestTimeout 0 means no default bound. Close closes s and waits, at
// most requestTimeout, for calls and watches to finish.
func Wrap(s store.Store, requestTimeout time.Duration) store.Store {
	return guard.Wrap(&fixed{Store: s, lifetime: watchLifetime, closeWait: requestTimeout}, requestTimeout)
}

// fixed is the layer under the guard.
type fixed struct {
	store.Store
	lifetime  time.Duration // of one inner watch
	closeWait time.Duration // how long Close waits for watches
	watches   sync.WaitGroup
}

func (f *fixed) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	pair, err := f.Store.Get(ctx, key, opts)
	return pair, classify(err)
}

func (f *fixed) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	return classify(f.Store.Put(ctx, key, value, opts))
}

func (f *fixed) Delete(ctx context.Context, key string) error {
	return classify(f.Store.Delete(ctx, key))
}

func (f *fixed) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	ok, err := f.Store.Exists(ctx, key, opts)
	return ok, classify(err)
}

func (f *fixed) List(ctx context.Context, dir string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	pairs, err := f.Store.List(ctx, dir, opts)
	return pairs, classify(err)
}

func (f *fixed) DeleteTree(ctx context.Context, dir string) error {
	return classify(f.Store.DeleteTree(ctx, dir))
}

func (f *fixed) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	ok, err := f.Store.AtomicDelete(ctx, key, previous)
	return ok, classify(err)
}

// AtomicPut confirms kvtools' ErrKeyExists with a read (see Wrap).
func (f *fixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	ok, pair, err := f.Store.AtomicPut(ctx, key, value, previous, opts)
	if previous != nil || !errors.Is(err, store.ErrKeyExists) {
		return ok, pair, classify(err)
	}
	_, gerr := f.Store.Get(ctx, key, &store.ReadOptions{Consistent: true})
	switch {
	case gerr == nil:
		return false, nil, err
	case errors.Is(gerr, store.ErrKeyNotFound):
		return false, nil, ErrCreateUnconfirmed
	default:
		return false, nil, fmt.Errorf("redis: create not confirmed: %w", classify(gerr))
	}
}

// Watch forwards kvtools watches of key until ctx ends. Each inner watch
// runs under a context that is not cancelled with ctx but ends lifetime
// after it started: kvtools' watch blocks in its subscription until the
// next event, whatever its context, and logs the cancellation when it
// notices it; a deadline ends its read quietly. When an inner watch ends
// at its deadline, a new one replaces it (its first event is the current
// value); when it ends earlier (an error), the returned channel closes.
func (f *fixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	return renewWatch(f, ctx, func(ctx context.Context) (<-chan *store.KVPair, error) { return f.Store.Watch(ctx, key, opts) })
}

// WatchTree is Watch for a directory.
func (f *fixed) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	return renewWatch(f, ctx, func(ctx context.Context) (<-chan []*store.KVPair, error) { return f.Store.WatchTree(ctx, dir, opts) })
}

func renewWatch[T any](f *fixed, ctx context.Context, open func(context.Context) (<-chan T, error)) (<-chan T, error) {
	type inner struct {
		ch       <-chan T
		deadline time.Time
		cancel   context.CancelFunc
	}
	start := func() (inner, error) {
		deadline := time.Now().Add(f.lifetime)
		ictx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		ch, err := open(ictx)
		if err != nil {
			cancel()
			return inner{}, classify(err)
		}
		return inner{ch, deadline, cancel}, nil
	}
	in, err := start()
	if err != nil {
		return nil, err
	}
	out := make(chan T)
	// finish lets the current inner watch run to its end in the
	// background, so that out closes as soon as ctx ends.
	finish := func(in inner) {
		f.watches.Go(func() {
			drain(in.ch)
			in.cancel()
		})
	}
	f.watches.Go(func() {
		defer close(out)
		for {
			select {
			case v, ok := <-in.ch:
				if !ok {
					in.cancel()
					if ctx.Err() != nil || time.Now().Before(in.deadline.Add(-100*time.Millisecond)) {
						return // cancelled, or the watch failed
					}
					// A new subscription may block (a hung server):
					// do not hold out open for it once ctx ends.
					type started struct {
						in  inner
						err error
					}
					res := make(chan started, 1)
					f.watches.Go(func() {
						in, err := start()
						res <- started{in, err}
					})
					select {
					case r := <-res:
						if r.err != nil {
							return
						}
						in = r.in
					case <-ctx.Done():
						f.watches.Go(func() {
							if r := <-res; r.err == nil {
								drain(r.in.ch)
								r.in.cancel()
							}
						})
						return
					}
					continue
				}
				select {
				case out <- v:
				case <-ctx.Done():
					finish(in)
					return
				}
			case <-ctx.Done():
				finish(in)
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

// Close closes the store; its watches then end, and Close waits for them
// at most closeWait.
func (f *fixed) Close() error {
	err := f.Store.Close()
	done := make(chan struct{})
	go func() {
		f.watches.Wait()
		close(done)
	}()
	if f.closeWait > 0 {
		t := time.NewTimer(f.closeWait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
		}
	} else {
		<-done
	}
	return err
}

// classify adds store.ErrNotReachable to errors that mean the server could
// not be reached or did not answer in time.
func classify(err error) error {
	if err == nil || errors.Is(err, store.ErrNotReachable) || !unreachable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrNotReachable, err)
}

// unreachable reports whether err is a connection-level failure rather
// than an answer of the server.
func unreachable(err error) bool {
	var ne net.Error
	switch {
	case errors.As(err, &ne),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, goredis.ErrClosed),
		errors.Is(err, goredis.ErrPoolTimeout),
		errors.Is(err, goredis.ErrPoolExhausted),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}
