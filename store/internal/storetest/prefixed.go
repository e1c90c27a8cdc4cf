package storetest

import (
	"context"
	"strings"

	"github.com/kvtools/valkeyrie/store"
)

// prefixed runs a store under a key prefix, so that valkeyrie's testsuite,
// whose keys are fixed, does not collide with other runs on a shared
// server. The prefix goes before every key given (without its leading
// slashes) and is taken off every key returned.
type prefixed struct {
	store.Store
	prefix string // put before keys, for instance "leadership-test/x/"
}

func (p prefixed) k(key string) string { return p.prefix + strings.TrimLeft(key, "/") }

func (p prefixed) strip(pair *store.KVPair) *store.KVPair {
	if pair == nil {
		return nil
	}
	c := *pair
	c.Key = strings.TrimPrefix(strings.TrimLeft(c.Key, "/"), p.prefix)
	return &c
}

func (p prefixed) strips(pairs []*store.KVPair) []*store.KVPair {
	if pairs == nil {
		return nil
	}
	out := make([]*store.KVPair, len(pairs))
	for i, pair := range pairs {
		out[i] = p.strip(pair)
	}
	return out
}

// withKey returns a copy of previous with the prefix added to its key.
func (p prefixed) withKey(previous *store.KVPair) *store.KVPair {
	if previous == nil {
		return nil
	}
	c := *previous
	c.Key = p.k(c.Key)
	return &c
}

// Put implements store.Store.
func (p prefixed) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	return p.Store.Put(ctx, p.k(key), value, opts)
}

// Get implements store.Store.
func (p prefixed) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	pair, err := p.Store.Get(ctx, p.k(key), opts)
	return p.strip(pair), err
}

// Delete implements store.Store.
func (p prefixed) Delete(ctx context.Context, key string) error {
	return p.Store.Delete(ctx, p.k(key))
}

// Exists implements store.Store.
func (p prefixed) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	return p.Store.Exists(ctx, p.k(key), opts)
}

// Watch implements store.Store.
func (p prefixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	in, err := p.Store.Watch(ctx, p.k(key), opts)
	if err != nil {
		return nil, err
	}
	return relay(ctx, in, p.strip), nil
}

// WatchTree implements store.Store.
func (p prefixed) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	in, err := p.Store.WatchTree(ctx, p.k(dir), opts)
	if err != nil {
		return nil, err
	}
	return relay(ctx, in, p.strips), nil
}

// relay forwards in to the returned channel through f until in closes.
// The wrapped stores close in when ctx ends.
func relay[T any](ctx context.Context, in <-chan T, f func(T) T) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		for v := range in {
			select {
			case out <- f(v):
			case <-ctx.Done():
				for range in {
				}
				return
			}
		}
	}()
	return out
}

// NewLock implements store.Store.
func (p prefixed) NewLock(ctx context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	return p.Store.NewLock(ctx, p.k(key), opts)
}

// List implements store.Store.
func (p prefixed) List(ctx context.Context, dir string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	pairs, err := p.Store.List(ctx, p.k(dir), opts)
	return p.strips(pairs), err
}

// DeleteTree implements store.Store.
func (p prefixed) DeleteTree(ctx context.Context, dir string) error {
	return p.Store.DeleteTree(ctx, p.k(dir))
}

// AtomicPut implements store.Store.
func (p prefixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	ok, pair, err := p.Store.AtomicPut(ctx, p.k(key), value, p.withKey(previous), opts)
	return ok, p.strip(pair), err
}

// AtomicDelete implements store.Store.
func (p prefixed) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	return p.Store.AtomicDelete(ctx, p.k(key), p.withKey(previous))
}
