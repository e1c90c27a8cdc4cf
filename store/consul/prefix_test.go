package consul

import (
	"context"
	"strings"

	"github.com/kvtools/valkeyrie/store"
)

// prefixed runs a store under a key prefix, so that valkeyrie's testsuite,
// whose keys are fixed, does not collide with other runs on a shared server.
// Keys in results are given back without the prefix.
type prefixed struct {
	store.Store
	prefix string // "p/"
}

func (p *prefixed) k(key string) string { return p.prefix + strings.TrimLeft(key, "/") }

func (p *prefixed) strip(pair *store.KVPair) *store.KVPair {
	if pair == nil {
		return nil
	}
	c := *pair
	c.Key = strings.TrimPrefix(strings.TrimLeft(c.Key, "/"), p.prefix)
	return &c
}

func (p *prefixed) strips(pairs []*store.KVPair) []*store.KVPair {
	if pairs == nil {
		return nil
	}
	out := make([]*store.KVPair, len(pairs))
	for i, pair := range pairs {
		out[i] = p.strip(pair)
	}
	return out
}

func (p *prefixed) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	return p.Store.Put(ctx, p.k(key), value, opts)
}

func (p *prefixed) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	pair, err := p.Store.Get(ctx, p.k(key), opts)
	return p.strip(pair), err
}

func (p *prefixed) Delete(ctx context.Context, key string) error {
	return p.Store.Delete(ctx, p.k(key))
}

func (p *prefixed) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	return p.Store.Exists(ctx, p.k(key), opts)
}

func (p *prefixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	in, err := p.Store.Watch(ctx, p.k(key), opts)
	if err != nil {
		return nil, err
	}
	return forward(ctx, in, p.strip), nil
}

func (p *prefixed) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	in, err := p.Store.WatchTree(ctx, p.k(dir), opts)
	if err != nil {
		return nil, err
	}
	return forward(ctx, in, p.strips), nil
}

func forward[T any](ctx context.Context, in <-chan T, f func(T) T) <-chan T {
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

func (p *prefixed) NewLock(ctx context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	return p.Store.NewLock(ctx, p.k(key), opts)
}

func (p *prefixed) List(ctx context.Context, dir string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	pairs, err := p.Store.List(ctx, p.k(dir), opts)
	return p.strips(pairs), err
}

func (p *prefixed) DeleteTree(ctx context.Context, dir string) error {
	return p.Store.DeleteTree(ctx, p.k(dir))
}

func (p *prefixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if previous != nil {
		c := *previous
		c.Key = p.k(c.Key)
		previous = &c
	}
	ok, pair, err := p.Store.AtomicPut(ctx, p.k(key), value, previous, opts)
	return ok, p.strip(pair), err
}

func (p *prefixed) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	if previous != nil {
		c := *previous
		c.Key = p.k(c.Key)
		previous = &c
	}
	return p.Store.AtomicDelete(ctx, p.k(key), previous)
}
