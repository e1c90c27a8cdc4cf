package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership"
)

// The store.Store methods that count as requests (Close does not).
const (
	mGet = iota
	mAtomicPut
	mPut
	mDelete
	mExists
	mWatch
	mWatchTree
	mNewLock
	mList
	mDeleteTree
	mAtomicDelete
	nMethods
)

var methodNames = [nMethods]string{"Get", "AtomicPut", "Put", "Delete", "Exists", "Watch", "WatchTree", "NewLock", "List", "DeleteTree", "AtomicDelete"}

// counting is a store.Store that counts the calls made through it, by
// method. A Watch (or WatchTree) counts once when it is opened; the events
// it delivers are counted apart, in events.
type counting struct {
	store.Store
	calls  [nMethods]atomic.Int64
	events atomic.Int64
	relays sync.WaitGroup // goroutines relaying watch events
	live   atomic.Int64   // of which running: the bench's, not the library's
}

func newCounting(s store.Store) *counting { return &counting{Store: s} }

// countSnapshot is the state of a counting store's counters.
type countSnapshot struct {
	calls  [nMethods]int64
	events int64
}

func (c *counting) snapshot() countSnapshot {
	var s countSnapshot
	for i := range s.calls {
		s.calls[i] = c.calls[i].Load()
	}
	s.events = c.events.Load()
	return s
}

// sub returns the counts between two snapshots.
func (s countSnapshot) sub(o countSnapshot) countSnapshot {
	var d countSnapshot
	for i := range d.calls {
		d.calls[i] = s.calls[i] - o.calls[i]
	}
	d.events = s.events - o.events
	return d
}

func (s countSnapshot) total() int64 {
	var n int64
	for _, v := range s.calls {
		n += v
	}
	return n
}

func (s countSnapshot) byMethod() map[string]int64 {
	m := map[string]int64{}
	for i, v := range s.calls {
		if v != 0 {
			m[methodNames[i]] = v
		}
	}
	return m
}

// MinTTL passes on the wrapped store's minimum TTL, which the library
// reads through an optional interface that embedding would hide.
func (c *counting) MinTTL() time.Duration {
	if m, ok := c.Store.(interface{ MinTTL() time.Duration }); ok {
		return m.MinTTL()
	}
	return leadership.MinTTL
}

func (c *counting) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	c.calls[mPut].Add(1)
	return c.Store.Put(ctx, key, value, opts)
}

func (c *counting) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	c.calls[mGet].Add(1)
	return c.Store.Get(ctx, key, opts)
}

func (c *counting) Delete(ctx context.Context, key string) error {
	c.calls[mDelete].Add(1)
	return c.Store.Delete(ctx, key)
}

func (c *counting) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	c.calls[mExists].Add(1)
	return c.Store.Exists(ctx, key, opts)
}

func (c *counting) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	c.calls[mWatch].Add(1)
	in, err := c.Store.Watch(ctx, key, opts)
	if err != nil || in == nil {
		return in, err
	}
	return relay(c, ctx, in), nil
}

func (c *counting) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	c.calls[mWatchTree].Add(1)
	in, err := c.Store.WatchTree(ctx, dir, opts)
	if err != nil || in == nil {
		return in, err
	}
	return relay(c, ctx, in), nil
}

// relay passes a watch's events on, counting them, until the backend closes
// the watch. Once ctx ends, events nobody takes are dropped.
func relay[T any](c *counting, ctx context.Context, in <-chan T) <-chan T {
	out := make(chan T)
	c.live.Add(1)
	c.relays.Go(func() {
		defer c.live.Add(-1)
		defer close(out)
		for v := range in {
			c.events.Add(1)
			select {
			case out <- v:
			case <-ctx.Done():
			}
		}
	})
	return out
}

func (c *counting) NewLock(ctx context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	c.calls[mNewLock].Add(1)
	return c.Store.NewLock(ctx, key, opts)
}

func (c *counting) List(ctx context.Context, dir string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	c.calls[mList].Add(1)
	return c.Store.List(ctx, dir, opts)
}

func (c *counting) DeleteTree(ctx context.Context, dir string) error {
	c.calls[mDeleteTree].Add(1)
	return c.Store.DeleteTree(ctx, dir)
}

func (c *counting) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	c.calls[mAtomicPut].Add(1)
	return c.Store.AtomicPut(ctx, key, value, previous, opts)
}

func (c *counting) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	c.calls[mAtomicDelete].Add(1)
	return c.Store.AtomicDelete(ctx, key, previous)
}
