package consul

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
)

const (
	// maxBatchOps and maxBatchBytes bound a transaction made of concurrent
	// calls (older Consul versions take up to 64 operations, recent ones
	// 128, and a body of txn_max_req_len, 512KB by default).
	maxBatchOps   = 64
	maxBatchBytes = 256 << 10

	// maxSenders is how many transactions of one kind a store runs at
	// once. A call finding them all busy waits for the next one, which
	// takes every call waiting by then.
	maxSenders = 8
)

// batcher runs single-key operations of one kind, Gets or compare-and-
// swaps, as Consul transactions: alone when the store is idle, and when
// calls come faster than transactions return, the calls waiting meanwhile
// together, up to maxBatchOps in one transaction. Under load (thousands of
// elections renewing on one store) this divides the HTTP requests, the
// agent's work and the connections needed by up to maxBatchOps; idle, it
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

	mu      sync.Mutex
	queue   []*batchCall
	senders int
}

type batchCall struct {
	ctx  context.Context
	op   *api.KVTxnOp
	done chan batchResult // capacity 1
}

// batchResult is a call's outcome: the transaction's error (err, to be
// mapped by kv.fail), its own errors in a rolled back transaction
// (failed), or its result (kv).
type batchResult struct {
	kv     *api.KVPair
	failed []*api.TxnError
	err    error
}

// do runs op within ctx. The result may come after ctx ended only as
// ctx's error; the operation may still run (a write's outcome is then
// unknown, as for any call cut short).
func (b *batcher) do(ctx context.Context, op *api.KVTxnOp) batchResult {
	if err := ctx.Err(); err != nil {
		return batchResult{err: err}
	}
	c := &batchCall{ctx: ctx, op: op, done: make(chan batchResult, 1)}
	if !b.s.startTask(func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.queue = append(b.queue, c)
		if b.senders >= maxSenders {
			return false
		}
		b.senders++
		return true
	}, b.send) {
		return batchResult{err: ErrClosed}
	}
	select {
	case r := <-c.done:
		return r
	case <-ctx.Done():
		select {
		case r := <-c.done: // finished at the same moment: the result stands
			return r
		default:
		}
		return batchResult{err: ctx.Err()}
	}
}

// send runs transactions while calls are waiting.
func (b *batcher) send() {
	for {
		b.mu.Lock()
		batch := b.take()
		if len(batch) == 0 {
			b.senders--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.run(batch)
	}
}

// take removes the next batch from the queue: calls whose context ended
// are dropped, and a call on a key already in the batch waits for the
// next one.
func (b *batcher) take() []*batchCall {
	var batch, rest []*batchCall
	keys := map[string]bool{}
	size := 0
	for _, c := range b.queue {
		if c.ctx.Err() != nil {
			c.done <- batchResult{err: c.ctx.Err()}
			continue
		}
		n := len(c.op.Key) + len(c.op.Value)*4/3 + 128
		if len(batch) == maxBatchOps || keys[c.op.Key] || (len(batch) > 0 && size+n > maxBatchBytes) {
			rest = append(rest, c)
			continue
		}
		keys[c.op.Key] = true
		size += n
		batch = append(batch, c)
	}
	b.queue = rest
	return batch
}

// run sends one transaction and hands out its results.
func (b *batcher) run(batch []*batchCall) {
	// The transaction is bounded by the latest deadline of its calls (or
	// the request timeout), not cancelled when one caller gives up: the
	// others still want it, and cancelling would cost the connection.
	deadline := time.Now().Add(b.s.requestTimeout)
	for _, c := range batch {
		if d, ok := c.ctx.Deadline(); ok && d.After(deadline) {
			deadline = d
		}
	}
	ctx, cancel := context.WithDeadline(b.s.ctx, deadline)
	defer cancel()
	ops := make(api.TxnOps, len(batch))
	for i, c := range batch {
		ops[i] = &api.TxnOp{KV: c.op}
	}
	q := (&api.QueryOptions{RequireConsistent: b.consistent}).WithContext(ctx)
	ok, resp, _, err := b.s.client.Txn().Txn(ops, q)
	switch {
	case err != nil:
		for _, c := range batch {
			c.done <- batchResult{err: err}
		}
	case ok:
		if len(resp.Results) != len(batch) {
			err := fmt.Errorf("%d results for %d operations", len(resp.Results), len(batch))
			for _, c := range batch {
				c.done <- batchResult{err: err}
			}
			return
		}
		for i, c := range batch {
			r := resp.Results[i].KV
			if r == nil || r.Key != c.op.Key {
				c.done <- batchResult{err: errors.New("a result does not match its operation")}
				continue
			}
			c.done <- batchResult{kv: r}
		}
	case resp == nil:
		for _, c := range batch {
			c.done <- batchResult{err: errors.New("transaction refused without a reply")}
		}
	default:
		failed := map[int][]*api.TxnError{}
		for _, e := range resp.Errors {
			if e != nil && e.OpIndex >= 0 && e.OpIndex < len(batch) {
				failed[e.OpIndex] = append(failed[e.OpIndex], e)
			}
		}
		if len(failed) == 0 {
			err := errors.New("transaction refused without a reason")
			for _, c := range batch {
				c.done <- batchResult{err: err}
			}
			return
		}
		var again []*batchCall
		for i, c := range batch {
			if errs, ok := failed[i]; ok {
				c.done <- batchResult{failed: errs}
			} else {
				again = append(again, c)
			}
		}
		// Rolled back with the others: first in line for the next one.
		b.mu.Lock()
		b.queue = append(again, b.queue...)
		b.mu.Unlock()
	}
}
