package consul

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/leadership-go/leadership/store/internal/batch"
)

// batchLimits bound the transactions made of concurrent calls: older
// Consul versions take up to 64 operations, recent ones 128, and a body of
// txn_max_req_len, 512KB by default. At most 8 transactions of one kind
// run at once; a call finding them all busy waits for the next one, which
// takes every call waiting by then.
var batchLimits = batch.Limits{MaxCalls: 64, MaxBytes: 256 << 10, MaxSenders: 8}

// batcher runs single-key operations of one kind, Gets or compare-and-
// swaps, as Consul transactions: alone when the store is idle, and when
// calls come faster than transactions return, the calls waiting meanwhile
// together, up to 64 operations in one transaction. Under load (thousands of
// elections renewing on one store) this divides the HTTP requests, the
// agent's work and the connections needed by up to 64; idle, it
// adds nothing but the transaction's encoding.
//
// A transaction is all or nothing: when some of its operations fail (a
// stale index), Consul reports each failed one and applies none. Those get
// their error; the others go again in the next transaction. A batch never
// holds two operations on the same key, so the outcome is the same as if
// each call had run alone, in some order.
type batcher struct {
	s          *kv
	consistent bool // reads: in consistent mode
	q          batch.Queue[*batchCall, batchResult]
}

// newBatcher returns the batcher of s for reads (consistent or not) or
// compare-and-swaps.
func newBatcher(s *kv, consistent bool) *batcher {
	b := &batcher{s: s, consistent: consistent}
	b.q = batch.Queue[*batchCall, batchResult]{Limits: batchLimits, Distinct: true, Ended: failed, Run: b.run}
	return b
}

type batchCall struct {
	batch.Call[batchResult]
	op *api.KVTxnOp
}

// batchResult is a call's outcome: the transaction's error (err, to be
// mapped by kv.fail), its own errors in a rolled back transaction
// (failed), or its result (kv).
type batchResult struct {
	kv     *api.KVPair
	failed []*api.TxnError
	err    error
}

// failed is the result of a call that failed with err.
func failed(err error) batchResult { return batchResult{err: err} }

// do runs op within ctx. The result may come after ctx ended only as
// ctx's error; the operation may still run (a write's outcome is then
// unknown, as for any call cut short).
func (b *batcher) do(ctx context.Context, op *api.KVTxnOp) batchResult {
	if err := ctx.Err(); err != nil {
		return batchResult{err: err}
	}
	c := &batchCall{op: op, Call: batch.Call[batchResult]{
		Ctx: ctx, Key: op.Key, Size: len(op.Key) + len(op.Value)*4/3 + 128, Done: make(chan batchResult, 1),
	}}
	if !b.s.startTask(func() bool { return b.q.Push(c) }, b.q.Send) {
		return batchResult{err: errClosed}
	}
	return b.q.Wait(c)
}

// reads reports whether b runs Gets (get-or-empty operations).
func (b *batcher) reads() bool { return b != b.s.writes }

// run sends one transaction and hands out its results.
func (b *batcher) run(calls []*batchCall) {
	// The transaction is bounded by the latest deadline of its calls (or
	// the request timeout), not cancelled when one caller gives up: the
	// others still want it, and cancelling would cost the connection.
	deadline := time.Now().Add(b.s.requestTimeout)
	for _, c := range calls {
		if d, ok := c.Ctx.Deadline(); ok && d.After(deadline) {
			deadline = d
		}
	}
	ctx, cancel := context.WithDeadline(b.s.ctx, deadline)
	defer cancel()
	ops := make(api.TxnOps, len(calls))
	for i, c := range calls {
		ops[i] = &api.TxnOp{KV: c.op}
	}
	q := (&api.QueryOptions{RequireConsistent: b.consistent}).WithContext(ctx)
	ok, resp, _, err := b.s.client.Txn().Txn(ops, q)
	switch {
	case err != nil:
		for _, c := range calls {
			c.Done <- batchResult{err: err}
		}
	case ok && len(resp.Results) < len(calls) && b.reads():
		// The agent leaves out of a read transaction's reply the keys the
		// token may not read (get-or-empty answers every other key, even
		// a missing one): those calls are refused, the others answered.
		byKey := make(map[string]*api.KVPair, len(resp.Results))
		for _, r := range resp.Results {
			if r != nil && r.KV != nil {
				byKey[r.KV.Key] = r.KV
			}
		}
		for _, c := range calls {
			if r, found := byKey[c.Key]; found {
				c.Done <- batchResult{kv: r}
			} else {
				c.Done <- batchResult{err: &ACLError{Err: errPermissionDenied, Permission: "key:read", Resource: c.Key, Anonymous: b.s.anonymous}}
			}
		}
	case ok:
		if len(resp.Results) != len(calls) {
			err := fmt.Errorf("%d results for %d operations", len(resp.Results), len(calls))
			for _, c := range calls {
				c.Done <- batchResult{err: err}
			}
			return
		}
		for i, c := range calls {
			r := resp.Results[i].KV
			if r == nil || r.Key != c.Key {
				c.Done <- batchResult{err: errors.New("a result does not match its operation")}
				continue
			}
			c.Done <- batchResult{kv: r}
		}
	case resp == nil:
		for _, c := range calls {
			c.Done <- batchResult{err: errors.New("transaction refused without a reply")}
		}
	default:
		failed := map[int][]*api.TxnError{}
		for _, e := range resp.Errors {
			if e != nil && e.OpIndex >= 0 && e.OpIndex < len(calls) {
				failed[e.OpIndex] = append(failed[e.OpIndex], e)
			}
		}
		if len(failed) == 0 {
			err := errors.New("transaction refused without a reason")
			for _, c := range calls {
				c.Done <- batchResult{err: err}
			}
			return
		}
		var again []*batchCall
		for i, c := range calls {
			if errs, ok := failed[i]; ok {
				c.Done <- batchResult{failed: errs}
			} else {
				again = append(again, c)
			}
		}
		// Rolled back with the others: first in line for the next one.
		b.q.Requeue(again)
	}
}
