package etcd

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/kvtools/valkeyrie/store"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leadership-go/leadership/store/internal/batch"
)

// batchLimits bound the transactions made of concurrent calls. etcd takes
// up to --max-txn-ops compares and operations per branch (128 by default),
// and a compare-and-swap needs two compares: 64 calls per transaction; and
// a request of up to --max-request-bytes (1.5 MiB by default). At most 4
// transactions of one kind run at once; a call finding them all busy waits
// for the next one, which takes every call waiting by then.
var batchLimits = batch.Limits{MaxCalls: 64, MaxBytes: 1 << 20, MaxSenders: 4}

// batchTimeout bounds a transaction whose calls have no deadline.
const batchTimeout = 30 * time.Second

// batcher runs single-key calls of one kind, linearizable Gets or
// compare-and-swaps, as etcd transactions: alone when the store is idle,
// and when calls come faster than transactions return, the calls waiting
// meanwhile together, up to 64 in one transaction. Thousands of elections
// renewing on one client then cost the server a request per 64 renewals,
// not one each (docs/scale.md).
//
// A transaction's compares hold for all or none: when one fails, none of
// its writes are applied, and its else branch reads every key in the same
// revision, which shows the calls whose compare failed. Those get
// store.ErrKeyModified; the others go again at once, by themselves. A
// batch never holds two calls on the same key, so the outcome is the same
// as if each call had run alone, in some order.
type batcher struct {
	client *clientv3.Client
	q      batch.Queue[*batchCall, batchResult]
}

// batchCall is one call: a read (prev nil) or a compare-and-swap of value
// over prev.
type batchCall struct {
	batch.Call[batchResult]
	prev  *store.KVPair
	value []byte
}

// batchResult is a call's outcome: the pair read (nil: the key is
// missing) or written, the revision of the reply, or the error.
type batchResult struct {
	pair *store.KVPair
	rev  int64
	err  error
}

func failed(err error) batchResult { return batchResult{err: err} }

func newBatcher(client *clientv3.Client, writes bool) *batcher {
	b := &batcher{client: client}
	run := b.runReads
	if writes {
		run = b.runSwaps
	}
	b.q = batch.Queue[*batchCall, batchResult]{Limits: batchLimits, Distinct: true, Ended: failed, Run: run}
	return b
}

// do runs the call of key within ctx. The result may come after ctx ended
// only as ctx's error; the call may still run (a write's outcome is then
// unknown, as for any call cut short).
func (b *batcher) do(ctx context.Context, key string, prev *store.KVPair, value []byte) batchResult {
	if err := ctx.Err(); err != nil {
		return failed(err)
	}
	size := len(key) + 64
	if prev != nil {
		size += len(key) + len(prev.Value) + len(value) + 64
	}
	c := &batchCall{prev: prev, value: value, Call: batch.Call[batchResult]{
		Ctx: ctx, Key: key, Size: size, Done: make(chan batchResult, 1),
	}}
	return b.q.Do(c)
}

// runReads reads every call's key in one linearizable transaction.
func (b *batcher) runReads(calls []*batchCall) {
	ctx, cancel := batch.Context(calls, batchTimeout)
	defer cancel()
	ops := make([]clientv3.Op, len(calls))
	for i, c := range calls {
		ops[i] = clientv3.OpGet(c.Key)
	}
	resp, err := b.client.Txn(ctx).Then(ops...).Commit()
	if err == nil && len(resp.Responses) != len(calls) {
		err = errors.New("etcd: a transaction answered with fewer results than operations")
	}
	if err != nil {
		for _, c := range calls {
			c.Done <- failed(err)
		}
		return
	}
	rev := resp.Header.Revision
	for i, c := range calls {
		r := resp.Responses[i].GetResponseRange()
		switch {
		case r == nil:
			c.Done <- failed(errors.New("etcd: a read in a transaction has no range result"))
		case len(r.Kvs) == 0:
			c.Done <- batchResult{rev: rev}
		default:
			kv := r.Kvs[0]
			c.Done <- batchResult{rev: rev, pair: &store.KVPair{Key: string(kv.Key), Value: kv.Value, LastIndex: uint64(kv.ModRevision)}}
		}
	}
}

// runSwaps writes every call's value in one transaction, if every call's
// key still has its previous revision and value.
func (b *batcher) runSwaps(calls []*batchCall) {
	ctx, cancel := batch.Context(calls, batchTimeout)
	defer cancel()
	cmps := make([]clientv3.Cmp, 0, 2*len(calls))
	puts := make([]clientv3.Op, len(calls))
	gets := make([]clientv3.Op, len(calls))
	for i, c := range calls {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(c.Key), "=", int64(c.prev.LastIndex)),
			clientv3.Compare(clientv3.Value(c.Key), "=", string(c.prev.Value)))
		puts[i] = clientv3.OpPut(c.Key, string(c.value))
		gets[i] = clientv3.OpGet(c.Key)
	}
	resp, err := b.client.Txn(ctx).If(cmps...).Then(puts...).Else(gets...).Commit()
	if err == nil && !resp.Succeeded && len(resp.Responses) != len(calls) {
		err = errors.New("etcd: a transaction answered with fewer results than operations")
	}
	if err != nil {
		for _, c := range calls {
			c.Done <- failed(err)
		}
		return
	}
	if resp.Succeeded {
		for _, c := range calls {
			c.Done <- batchResult{rev: resp.Header.Revision, pair: &store.KVPair{Key: c.Key, Value: c.value, LastIndex: uint64(resp.Header.Revision)}}
		}
		return
	}
	// Nothing was written. The reads of the else branch, in the
	// revision the compares saw, show which compares failed.
	var again []*batchCall
	for i, c := range calls {
		r := resp.Responses[i].GetResponseRange()
		if r == nil || len(r.Kvs) == 0 || r.Kvs[0].ModRevision != int64(c.prev.LastIndex) || !bytes.Equal(r.Kvs[0].Value, c.prev.Value) {
			c.Done <- failed(store.ErrKeyModified)
			continue
		}
		again = append(again, c)
	}
	if len(again) == len(calls) {
		// Every compare held in the reads: the reply contradicts itself.
		for _, c := range calls {
			c.Done <- failed(errors.New("etcd: a transaction failed although its compares held"))
		}
		return
	}
	// Their compares held: they go again at once, by themselves, so that
	// calls joining meanwhile cannot make them fail again and again.
	b.runSwaps(again)
}
