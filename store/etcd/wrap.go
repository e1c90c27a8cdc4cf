package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvtools/valkeyrie/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/leadership-go/leadership/store/internal/guard"
)

// Wrap applies this package's fixes to an etcd store built elsewhere, for
// instance by valkeyrie.NewStore(ctx, "etcdv3", endpoints, cfg):
//
//   - every call returns by its context's deadline, or after
//     requestTimeout when the context has none (kvtools' Delete has no
//     timeout of its own, and a call blocks while the client waits for a
//     connection), and watches never leak a goroutine on a reader that
//     walks away;
//   - watches are opened with etcd's require-leader option, so a member
//     cut off from the cluster's quorum ends them instead of staying
//     silent;
//   - errors meaning the cluster could not be reached in time (gRPC
//     Unavailable or DeadlineExceeded, such as "no leader", and deadline
//     errors) also match store.ErrNotReachable. The store's own sentinel
//     errors are returned unchanged.
//
// requestTimeout 0 means no default bound (calls without a deadline may
// block). Close closes s and waits, at most requestTimeout, for abandoned
// calls to finish.
func Wrap(s store.Store, requestTimeout time.Duration) store.Store {
	return guard.Wrap(&fixed{Store: s}, requestTimeout)
}

// fixed is the layer under the guard: watches with require-leader and
// error classification.
type fixed struct {
	store.Store
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

func (f *fixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	ok, pair, err := f.Store.AtomicPut(ctx, key, value, previous, opts)
	return ok, pair, classify(err)
}

func (f *fixed) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	ok, err := f.Store.AtomicDelete(ctx, key, previous)
	return ok, classify(err)
}

func (f *fixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	ch, err := f.Store.Watch(clientv3.WithRequireLeader(ctx), key, opts)
	return ch, classify(err)
}

func (f *fixed) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	ch, err := f.Store.WatchTree(clientv3.WithRequireLeader(ctx), dir, opts)
	return ch, classify(err)
}

// classify adds store.ErrNotReachable to errors that mean the cluster did
// not answer in time.
func classify(err error) error {
	if err == nil || errors.Is(err, store.ErrNotReachable) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", store.ErrNotReachable, err)
	}
	var code codes.Code
	var c interface{ Code() codes.Code } // etcd's rpctypes.EtcdError
	if errors.As(err, &c) {
		code = c.Code()
	} else if st, ok := status.FromError(err); ok {
		code = st.Code()
	}
	if code == codes.Unavailable || code == codes.DeadlineExceeded {
		return fmt.Errorf("%w: %w", store.ErrNotReachable, err)
	}
	return err
}
