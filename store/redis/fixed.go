package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"syscall"
	"time"
	"unsafe"

	kvredis "github.com/kvtools/redis"
	"github.com/kvtools/valkeyrie/store"
	goredis "github.com/redis/go-redis/v9"

	"github.com/leadership-go/leadership/fenced"
	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/guard"
)

// wrap applies this package's fixes to a Redis store built elsewhere, for
// instance by valkeyrie.NewStore(ctx, "redis", ...) (kvtools' raw codec),
// as Open does to its own (see the package documentation): with watches
// of this package's own when s is a *kvredis.Store on a single server or
// Sentinel client, and fenced writes when it also has the raw codec.
// requestTimeout 0 means no default bound.
func wrap(s store.Store, requestTimeout time.Duration) store.Store {
	f := newFixed(s, requestTimeout)
	if c := kvtoolsClient(s); c != nil {
		f.hub = newHub(c, c.Options().DB, storeReader{s}, requestTimeout)
	}
	if fp := fence(f, s); fp != nil {
		return guard.WrapFenced(f, fp, requestTimeout)
	}
	return guard.Wrap(f, requestTimeout)
}

// wrapOwn is wrap with watches on client, a go-redis client of the
// adapter's own for the same server and DB, which Close closes.
func wrapOwn(s store.Store, client *goredis.Client, db int, requestTimeout time.Duration) *guard.Fenced {
	f := newFixed(s, requestTimeout)
	f.own = client
	f.hub = newHub(client, db, clientReader{client}, requestTimeout)
	return guard.NewFenced(f, fence(f, s), requestTimeout)
}

// fence returns s's fenced writes, or nil if s cannot make them; f, which
// fixes s, then creates keys on the same client.
func fence(f *fixed, s store.Store) fenced.Putter {
	fp := newFencer(s)
	if fp == nil {
		return nil
	}
	f.creator = fp.client
	f.reads, f.swaps = newBatcher(fp.client, false), newBatcher(fp.client, true)
	return fp
}

// kvtoolsClient returns the go-redis client of a kvtools store, which
// kvtools keeps in an unexported field, or nil if s is not a kvtools store
// or its client is not a *goredis.Client. The field's type is checked, so
// a kvtools release that changes it gives nil, not a crash.
func kvtoolsClient(s store.Store) *goredis.Client {
	kv, ok := s.(*kvredis.Store)
	if !ok || kv == nil {
		return nil
	}
	f := reflect.ValueOf(kv).Elem().FieldByName("client")
	if !f.IsValid() || f.Type() != reflect.TypeFor[goredis.UniversalClient]() {
		return nil
	}
	//nolint:gosec // read-only access to a field of checked type
	c, _ := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(*goredis.Client)
	return c
}

// fixed is the layer under the guard.
type fixed struct {
	adapter.Classified
	hub       *hub            // nil: the inner store's watches
	own       *goredis.Client // the hub's client, if the adapter's own
	creator   *goredis.Client // kvtools' client, raw codec: creates with SETNX; nil: kvtools' AtomicPut
	reads     *batcher        // with creator: Gets, batched (batch.go)
	swaps     *batcher        // with creator: compare-and-swaps, batched
	closeWait time.Duration   // how long Close waits for watches
}

func newFixed(s store.Store, closeWait time.Duration) *fixed {
	return &fixed{Classified: adapter.Classified{Store: s, Unreachable: unreachable, Kinds: kinds}, closeWait: closeWait}
}

// Get reads key; with the raw codec, Gets made at once go as one MGET
// (batch.go).
func (f *fixed) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	if f.reads == nil {
		return f.Classified.Get(ctx, key, opts)
	}
	pair, err := f.reads.get(ctx, key)
	return pair, classify(err)
}

// AtomicPut creates with SETNX of its own, or confirms kvtools'
// ErrKeyExists with a read (see wrap). With the raw codec, compare-and-
// swaps made at once go as one script (batch.go).
func (f *fixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if previous == nil && f.creator != nil {
		return f.create(ctx, key, value, opts)
	}
	if f.swaps != nil {
		var ttl time.Duration
		if opts != nil {
			ttl = opts.TTL
		}
		ok, pair, err := f.swaps.swap(ctx, key, value, previous, ttl)
		return ok, pair, classify(err)
	}
	ok, pair, err := f.Store.AtomicPut(ctx, key, value, previous, opts)
	if previous != nil || !errors.Is(err, store.ErrKeyExists) {
		return ok, pair, classify(err)
	}
	_, gerr := f.Store.Get(ctx, key, &store.ReadOptions{Consistent: true})
	switch {
	case gerr == nil:
		return false, nil, err
	case errors.Is(gerr, store.ErrKeyNotFound):
		return false, nil, errCreateUnconfirmed
	default:
		return false, nil, fmt.Errorf("redis: create not confirmed: %w", classify(gerr))
	}
}

// create is kvtools' create (AtomicPut with previous == nil) with the raw
// codec, the value stored as it is, but with SETNX's error returned rather
// than reported as store.ErrKeyExists. The pair returned is kvtools': the
// value written, and as LastIndex the clock's nanoseconds.
func (f *fixed) create(ctx context.Context, key string, value []byte, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	var ttl time.Duration
	if opts != nil {
		ttl = opts.TTL
	}
	created, err := f.creator.SetNX(ctx, normalize(key), value, ttl).Result()
	switch {
	case err != nil:
		return false, nil, classify(err)
	case !created:
		return false, nil, store.ErrKeyExists
	}
	return true, &store.KVPair{Key: key, Value: value, LastIndex: uint64(time.Now().Nanosecond())}, nil //nolint:gosec // never negative
}

// Watch sends the current pair at key (a pair with only Key when the key
// does not exist), then a fresh read of the key after each keyspace
// notification and after each reconnection, until ctx ends or the store
// closes (see the package documentation).
func (f *fixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	if f.hub == nil {
		return f.Classified.Watch(ctx, key, opts)
	}
	ch, err := watchKey(f.hub, ctx, normalize(key))
	return ch, classify(err)
}

// WatchesEndWithContext reports whether Watch's channels close once
// their context ends, with no sender waiting past that
// (guard.ContextBoundWatches): with the hub, Watch's own.
func (f *fixed) WatchesEndWithContext() bool { return f.hub != nil }

// WatchTree is Watch for the keys under dir: each state is the List of
// dir (empty when there are none).
func (f *fixed) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	if f.hub == nil {
		return f.Classified.WatchTree(ctx, dir, opts)
	}
	ch, err := watchTree(f.hub, ctx, normalize(dir))
	return ch, classify(err)
}

// Close ends the watches, closes the store and waits, at most closeWait,
// for the watches' goroutines.
func (f *fixed) Close() error {
	var done <-chan struct{}
	if f.hub != nil {
		done = f.hub.close()
	}
	err := f.Store.Close()
	if f.own != nil {
		_ = f.own.Close()
	}
	if done != nil {
		guard.Await(done, f.closeWait)
	}
	return err
}

// normalize is kvtools' key normalization: no leading "/".
func normalize(key string) string { return strings.TrimPrefix(key, "/") }

// classify adds store.ErrNotReachable to errors that mean the server could
// not be reached or did not answer in time.
func classify(err error) error { return adapter.Refine(adapter.Classify(err, unreachable), kinds) }

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
