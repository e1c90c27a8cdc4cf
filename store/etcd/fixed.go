package etcd

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/kvtools/etcdv3"
	"github.com/kvtools/valkeyrie/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/leadership-go/leadership/fenced"
	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/guard"
)

// wrap applies this package's fixes to an etcd store built elsewhere, for
// instance by valkeyrie.NewStore(ctx, "etcdv3", endpoints, cfg), as Open
// does to its own (see the package documentation); the result implements
// fenced.Putter when s is a kvtools *etcdv3.Store whose client can be
// reached. requestTimeout 0 means no default bound.
func wrap(s store.Store, requestTimeout time.Duration) store.Store {
	f := newFixed(s)
	var p fenced.Putter
	if f.client != nil {
		p = f
	}
	return guard.WrapFenced(f, p, requestTimeout)
}

// fixed is the layer under the guard: watches with require-leader, error
// classification and fenced writes.
type fixed struct {
	adapter.Classified
	client *clientv3.Client // the kvtools store's, nil if out of reach
	revs   revisions        // with client: see rewind.go
	reads  *batcher         // with client: linearizable Gets, batched (batch.go)
	swaps  *batcher         // with client: compare-and-swaps, batched
}

func newFixed(s store.Store) *fixed {
	f := &fixed{Classified: adapter.Classified{Store: s, Unreachable: unreachableErr, Kinds: kinds}}
	if kv, ok := s.(*etcdv3.Store); ok {
		f.client = clientOf(kv)
	}
	if f.client != nil {
		f.reads, f.swaps = newBatcher(f.client, false), newBatcher(f.client, true)
	}
	return f
}

// FencedPut writes value at key, without a lease, in one etcd transaction
// that checks that guardKey exists and compares its ModRevision (kvtools'
// LastIndex) and its value with guard's: the write happens only if all
// hold, otherwise the error matches fenced.ErrGuardChanged. The value
// tells apart a record written anew at a revision a cluster that lost its
// data handed out again. Keys are named as kvtools names them (without a
// leading "/"). Without f.client it fails with errNoClient.
func (f *fixed) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	if f.client == nil {
		return errNoClient
	}
	if guard == nil {
		return adapter.GuardChanged(backend, key)
	}
	g := strings.TrimPrefix(guardKey, "/")
	resp, err := f.client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(g), ">", 0),
			clientv3.Compare(clientv3.ModRevision(g), "=", int64(guard.LastIndex)),
			clientv3.Compare(clientv3.Value(g), "=", string(guard.Value))).
		Then(clientv3.OpPut(strings.TrimPrefix(key, "/"), string(value))).
		Commit()
	if err != nil {
		return classify(err)
	}
	if !resp.Succeeded {
		return adapter.GuardChanged(backend, key)
	}
	return nil
}

// AtomicPut replaces key if its ModRevision is still previous.LastIndex
// and, when previous.Value is not nil and f.client is set, its value is
// still previous.Value, in one etcd transaction (with other calls made
// meanwhile, batch.go): a key written anew at a
// revision handed out again (a cluster that lost its data) is not taken
// for the one previous was read from, and a compare-and-swap sent before
// the loss cannot replace it. It returns store.ErrKeyModified on a
// mismatch or a missing key, as kvtools does, and the pair written with
// the transaction's revision. Creating (previous nil), a TTL, a nil
// Value or no client are kvtools' (the revision only).
func (f *fixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if previous == nil || previous.Value == nil || f.client == nil || opts != nil && opts.TTL > 0 {
		return f.Classified.AtomicPut(ctx, key, value, previous, opts)
	}
	r := f.swaps.do(ctx, strings.TrimPrefix(key, "/"), previous, value)
	switch {
	case errors.Is(r.err, store.ErrKeyModified):
		return false, nil, store.ErrKeyModified
	case r.err != nil:
		return false, nil, classify(r.err)
	}
	return true, r.pair, nil
}

// AtomicDelete deletes key if its ModRevision is still previous.LastIndex
// and, when previous.Value is not nil and f.client is set, its value is
// still previous.Value, in one etcd transaction: a key written anew at a
// revision handed out again (a cluster that lost its data) is not taken
// for the one previous was read from. It returns store.ErrKeyNotFound for
// a missing key and store.ErrKeyModified on a mismatch. Without a Value,
// or without the client, it is kvtools' (the revision only).
func (f *fixed) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	if previous == nil || previous.Value == nil || f.client == nil {
		return f.Classified.AtomicDelete(ctx, key, previous)
	}
	k := strings.TrimPrefix(key, "/")
	resp, err := f.client.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(k), "=", int64(previous.LastIndex)),
			clientv3.Compare(clientv3.Value(k), "=", string(previous.Value))).
		Then(clientv3.OpDelete(k)).
		Else(clientv3.OpGet(k, clientv3.WithCountOnly())).
		Commit()
	switch {
	case err != nil:
		return false, classify(err)
	case resp.Succeeded:
		return true, nil
	case len(resp.Responses) == 1 && resp.Responses[0].GetResponseRange().GetCount() == 0:
		return false, store.ErrKeyNotFound
	}
	return false, store.ErrKeyModified
}

func (f *fixed) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	return f.Classified.WatchTree(clientv3.WithRequireLeader(ctx), dir, opts)
}

// classify adds store.ErrNotReachable to errors that mean the cluster did
// not answer in time, and this package's sentinels to etcd's refusals.
func classify(err error) error { return adapter.Refine(adapter.Classify(err, unreachableErr), kinds) }

// unreachableErr reports whether err means the cluster did not answer in
// time: a deadline, or gRPC Unavailable or DeadlineExceeded.
func unreachableErr(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var code codes.Code
	var c interface{ Code() codes.Code } // etcd's rpctypes.EtcdError
	if errors.As(err, &c) {
		code = c.Code()
	} else if st, ok := status.FromError(err); ok {
		code = st.Code()
	}
	return code == codes.Unavailable || code == codes.DeadlineExceeded
}
