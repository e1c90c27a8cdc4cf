package leadership

import (
	"context"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
)

// Every store call the engine makes goes through this file. A call runs on
// a goroutine of its own and the engine stops waiting for it the moment its
// context ends, whether or not the store honours that context (the raw
// kvtools Consul and ZooKeeper stores do not). So a store that hangs can
// delay neither a follower's expiry nor Stop: the engine goes on, treats
// the call's outcome as unknown, and the abandoned goroutine ends whenever
// the store returns.

// callResult is what a store call returned.
type callResult[T any] struct {
	v   T
	err error
}

// abandonable runs call and returns its result, or ctx's error as soon as
// ctx ends. If the call returns after it was abandoned, abandoned (when not
// nil) receives its value, so that resources such as a watch channel are
// released.
func abandonable[T any](ctx context.Context, call func() (T, error), abandoned func(T)) (T, error) {
	if ctx.Err() != nil {
		var zero T
		return zero, ctx.Err()
	}
	done := make(chan callResult[T], 1)
	go func() {
		v, err := call()
		done <- callResult[T]{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done: // finished at the same moment: use it
		return r.v, r.err
	default:
	}
	if abandoned != nil {
		go func() {
			if r := <-done; r.err == nil {
				abandoned(r.v)
			}
		}()
	}
	var zero T
	return zero, ctx.Err()
}

// getKey reads key with a linearizable read where the backend has one.
func getKey(ctx context.Context, client Backend, key string) (*store.KVPair, error) {
	return abandonable(ctx, func() (*store.KVPair, error) {
		return client.Get(ctx, key, &store.ReadOptions{Consistent: true})
	}, nil)
}

// putResult is what a compare-and-swap returned.
type putResult struct {
	ok   bool
	pair *store.KVPair
}

// casKey compare-and-swaps value over prev (nil: create).
func casKey(ctx context.Context, client Backend, key string, value []byte, prev *store.KVPair) (bool, *store.KVPair, error) {
	r, err := abandonable(ctx, func() (putResult, error) {
		ok, pair, err := client.AtomicPut(ctx, key, value, prev, nil)
		return putResult{ok, pair}, err
	}, nil)
	return r.ok, r.pair, err
}

// casDelete deletes key if it still holds prev.
func casDelete(ctx context.Context, client Backend, key string, prev *store.KVPair) (bool, error) {
	return abandonable(ctx, func() (bool, error) {
		return client.AtomicDelete(ctx, key, prev)
	}, nil)
}

// watchKey opens a watch that lives as long as watchCtx; the call itself is
// abandoned when callCtx ends, and a watch that opens after that is
// cancelled (cancelWatch) and drained.
func watchKey(callCtx, watchCtx context.Context, cancelWatch context.CancelFunc, client Backend, key string) (<-chan *store.KVPair, error) {
	return abandonable(callCtx, func() (<-chan *store.KVPair, error) {
		return client.Watch(watchCtx, key, nil)
	}, func(ch <-chan *store.KVPair) {
		cancelWatch()
		if ch != nil {
			for range ch {
			}
		}
	})
}

// fencedPutKey writes value at key through w only if the record at guardKey
// is still guard, in one atomic operation of the store (FencedPut).
func fencedPutKey(ctx context.Context, w fenced.Putter, key string, value []byte, guardKey string, guard *store.KVPair) error {
	_, err := abandonable(ctx, func() (struct{}, error) {
		return struct{}{}, w.FencedPut(ctx, key, value, guardKey, guard)
	}, nil)
	return err
}
