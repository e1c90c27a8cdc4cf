package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/guard"
)

// wrap applies what can be fixed from outside to a ZooKeeper store built
// elsewhere, typically kvtools/zookeeper's from valkeyrie.NewStore(ctx,
// "zookeeper", ...):
//
//   - every call returns by its context's deadline, or after
//     requestTimeout when it has none (kvtools ignores contexts: a call
//     against a hung server takes over a minute), and a watch never blocks
//     its backend goroutine once its reader is gone;
//   - keys are passed without their leading "/" (kvtools adds it), which
//     avoids kvtools' bug creating a nested key with missing parents when
//     the key starts with "/" (its parent path becomes "//a": AtomicPut
//     fails, Put silently writes nothing);
//   - creating a key whose missing parents another client creates at the
//     same time returns store.ErrKeyExists or succeeds (kvtools returns the
//     raw zk.ErrNodeExists of the parent);
//   - a compare-and-swap on a missing key returns store.ErrKeyNotFound,
//     not zk.ErrNoNode, and a LastIndex that cannot be a data version
//     (above 2^31-1; kvtools truncates it to int32, and -1 would mean "any
//     version") returns store.ErrKeyModified without writing;
//   - Put without TTL is a compare-and-swap loop, so that it writes or
//     fails: kvtools' Put creates missing keys ignoring every error,
//     including a concurrent creation, and returns nil without writing;
//     Put with TTL is checked to have created the key.
//
// Not fixable from outside: reads may come from a server lagging behind
// the leader, the watch closes on a missing or deleted key and on any
// error, a call abandoned at its deadline keeps running in the background,
// and Close does not wait for the client's goroutines (one may outlive it
// by up to 20 session timeouts against a server that accepts connections
// but does not answer). Prefer Open.
func wrap(s store.Store, requestTimeout time.Duration) store.Store {
	return guard.Wrap(&fixed{inner: s}, requestTimeout)
}

type fixed struct {
	inner store.Store
}

func trimKey(key string) (string, error) {
	k := strings.TrimLeft(key, "/")
	if strings.Trim(k, "/") == "" {
		return "", errEmptyKey
	}
	return k, nil
}

func (f *fixed) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	k, err := trimKey(key)
	if err != nil {
		return nil, err
	}
	return f.inner.Get(ctx, k, opts)
}

func (f *fixed) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	k, err := trimKey(key)
	if err != nil {
		return err
	}
	if opts != nil && opts.TTL > 0 {
		if err := f.inner.Put(ctx, k, value, opts); err != nil {
			return err
		}
		ok, err := f.inner.Exists(ctx, k, nil)
		if err == nil && !ok {
			err = fmt.Errorf("zookeeper: put %q: the key was not created", key)
		}
		return err
	}
	for ctx.Err() == nil {
		pair, err := f.inner.Get(ctx, k, nil)
		if errors.Is(err, store.ErrKeyNotFound) {
			pair = nil
		} else if err != nil {
			return err
		}
		_, _, err = f.AtomicPut(ctx, k, value, pair, nil)
		if !errors.Is(err, store.ErrKeyExists) && !errors.Is(err, store.ErrKeyModified) && !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
	}
	return ctx.Err()
}

func (f *fixed) Delete(ctx context.Context, key string) error {
	k, err := trimKey(key)
	if err != nil {
		return err
	}
	return f.inner.Delete(ctx, k)
}

func (f *fixed) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	k, err := trimKey(key)
	if err != nil {
		return false, err
	}
	return f.inner.Exists(ctx, k, opts)
}

func (f *fixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	k, err := trimKey(key)
	if err != nil {
		return nil, err
	}
	return f.inner.Watch(ctx, k, opts)
}

func (f *fixed) WatchTree(ctx context.Context, directory string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	k, err := trimKey(directory)
	if err != nil {
		return nil, err
	}
	return f.inner.WatchTree(ctx, k, opts)
}

func (f *fixed) NewLock(ctx context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	k, err := trimKey(key)
	if err != nil {
		return nil, err
	}
	return f.inner.NewLock(ctx, k, opts)
}

func (f *fixed) List(ctx context.Context, directory string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	k, err := trimKey(directory)
	if err != nil {
		return nil, err
	}
	return f.inner.List(ctx, k, opts)
}

func (f *fixed) DeleteTree(ctx context.Context, directory string) error {
	k, err := trimKey(directory)
	if err != nil {
		return err
	}
	return f.inner.DeleteTree(ctx, k)
}

func (f *fixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	k, err := trimKey(key)
	if err != nil {
		return false, nil, err
	}
	if previous != nil {
		if _, ok := version(previous.LastIndex); !ok {
			return false, nil, store.ErrKeyModified
		}
	}
	ok, pair, err := f.inner.AtomicPut(ctx, k, value, previous, opts)
	switch {
	case previous != nil && errors.Is(err, zk.ErrNoNode):
		return false, nil, store.ErrKeyNotFound
	case previous == nil && errors.Is(err, zk.ErrNodeExists):
		// kvtools creates the missing parents first and fails with this
		// raw error when another client created the last one meanwhile:
		// the parents exist now, try again.
		ok, pair, err = f.inner.AtomicPut(ctx, k, value, previous, opts)
		if errors.Is(err, zk.ErrNodeExists) {
			err = store.ErrKeyExists
		}
	}
	return ok, pair, err
}

func (f *fixed) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	k, err := trimKey(key)
	if err != nil {
		return false, err
	}
	if previous != nil {
		if _, ok := version(previous.LastIndex); !ok {
			return false, store.ErrKeyModified
		}
	}
	return f.inner.AtomicDelete(ctx, k, previous)
}

func (f *fixed) Close() error { return f.inner.Close() }
