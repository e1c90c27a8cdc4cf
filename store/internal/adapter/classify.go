package adapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"
)

// Classified is a store whose calls' errors also match
// store.ErrNotReachable when Unreachable says they mean the server could
// not be reached or did not answer in time; the store's own sentinel
// errors are returned unchanged. NewLock and Close are the inner store's.
// An adapter embeds it and overrides the calls it fixes further.
type Classified struct {
	store.Store
	// Unreachable reports whether an error is a connection-level failure
	// rather than an answer of the server.
	Unreachable func(error) bool
	// Kinds, when set, tag the client's refusals with the adapter's own
	// sentinels (see Refine).
	Kinds []Kind
}

// Classify returns err, made to match store.ErrNotReachable if
// Unreachable says so and it does not already.
func (c *Classified) Classify(err error) error {
	return Refine(Classify(err, c.Unreachable), c.Kinds)
}

// Classify returns err, made to match store.ErrNotReachable if
// unreachable(err) and it does not already.
func Classify(err error, unreachable func(error) bool) error {
	if err == nil || errors.Is(err, store.ErrNotReachable) || !unreachable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrNotReachable, err)
}

// Get classifies the inner Get's error.
func (c *Classified) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	pair, err := c.Store.Get(ctx, key, opts)
	return pair, c.Classify(err)
}

// Put classifies the inner Put's error.
func (c *Classified) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	return c.Classify(c.Store.Put(ctx, key, value, opts))
}

// Delete classifies the inner Delete's error.
func (c *Classified) Delete(ctx context.Context, key string) error {
	return c.Classify(c.Store.Delete(ctx, key))
}

// Exists classifies the inner Exists' error.
func (c *Classified) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	ok, err := c.Store.Exists(ctx, key, opts)
	return ok, c.Classify(err)
}

// List classifies the inner List's error.
func (c *Classified) List(ctx context.Context, dir string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	pairs, err := c.Store.List(ctx, dir, opts)
	return pairs, c.Classify(err)
}

// DeleteTree classifies the inner DeleteTree's error.
func (c *Classified) DeleteTree(ctx context.Context, dir string) error {
	return c.Classify(c.Store.DeleteTree(ctx, dir))
}

// AtomicPut classifies the inner AtomicPut's error.
func (c *Classified) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	ok, pair, err := c.Store.AtomicPut(ctx, key, value, previous, opts)
	return ok, pair, c.Classify(err)
}

// AtomicDelete classifies the inner AtomicDelete's error.
func (c *Classified) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	ok, err := c.Store.AtomicDelete(ctx, key, previous)
	return ok, c.Classify(err)
}

// Watch classifies the inner Watch's error.
func (c *Classified) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	ch, err := c.Store.Watch(ctx, key, opts)
	return ch, c.Classify(err)
}

// WatchTree classifies the inner WatchTree's error.
func (c *Classified) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	ch, err := c.Store.WatchTree(ctx, dir, opts)
	return ch, c.Classify(err)
}
