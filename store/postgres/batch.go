package postgres

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leadership-go/leadership/store/internal/batch"
)

// batchLimits bound the statements made of concurrent calls: 256 calls,
// 1MB. At most 2 statements of one kind run on a handle at once; a call
// finding them both busy waits for the next one, which takes every call
// waiting by then (up to 256).
var batchLimits = batch.Limits{MaxCalls: 256, MaxBytes: 1 << 20, MaxSenders: 2}

// batcher runs calls of one kind (single-key reads, compare-and-swaps,
// creates) as single statements over arrays: alone when the handle is
// idle, and when calls come faster than statements return, the calls
// waiting meanwhile together, up to 256 in one statement.
//
// Under load this is what keeps reads within their deadlines: a thousand
// elections on one handle renew every TTL/3, and with one statement per
// call on the pool's few connections (max(4, NumCPU) by default) each
// call waited behind hundreds of others for a connection, on a loaded
// machine longer than a leader's request timeout. Batched, a call waits
// for the statements of its kind in flight, then goes in the next one; the
// round trips, statements and transactions are divided by the batch size.
//
// A statement is one transaction, but its rows are independent: a
// compare-and-swap succeeds or not on its own row's index alone, as it
// would alone. A batch never holds two writes on the same key (the second
// waits for the next batch), so the outcome is that of the calls run one
// after the other, in some order.
type batcher struct {
	s   *Store
	run func(ctx context.Context, conn *pgxpool.Conn, batch []*batchCall) (map[string]batchResult, error)
	q   batch.Queue[*batchCall, batchResult]
}

// newBatcher returns a batcher of s that runs its batches with run;
// distinct: a batch holds at most one call per key.
func newBatcher(s *Store, distinct bool, run func(ctx context.Context, conn *pgxpool.Conn, batch []*batchCall) (map[string]batchResult, error)) *batcher {
	b := &batcher{s: s, run: run}
	b.q = batch.Queue[*batchCall, batchResult]{Limits: batchLimits, Distinct: distinct, Ended: failed, Run: b.runBatch}

	return b
}

// batchCall is one call: a key (in Call) and, for a compare-and-swap, the
// new row.
type batchCall struct {
	batch.Call[batchResult]
	value     []byte
	prev      int64  // index the row must have
	prevValue []byte // value the row must have, nil for any
	ttl       *int64 // milliseconds, nil for none
	owner     *string
}

// newCall returns the call on key of ctx, with value for a write.
func newCall(ctx context.Context, key string, value []byte) *batchCall {
	return &batchCall{Call: batch.Call[batchResult]{Ctx: ctx, Key: key}, value: value}
}

// batchResult is a call's outcome: the row read, or the index written
// (found false: no such live row, or nothing written), or the statement's
// error.
type batchResult struct {
	value []byte
	idx   int64
	found bool
	snap  string // reads: the snapshot of the read
	err   error
}

// failed is the result of a call that failed with err.
func failed(err error) batchResult { return batchResult{err: err} }

// batchable reports whether key can go in a batch: a key the server
// rejects (invalid UTF-8, NUL) would fail every call of its batch, so it
// runs alone.
func batchable(key string) bool {
	return utf8.ValidString(key) && !strings.ContainsRune(key, 0)
}

// do runs c within c.Ctx. After c.Ctx ends it returns c.Ctx's error at
// once; the statement may still run (a write's outcome is then unknown,
// as for any call cut short).
func (b *batcher) do(c *batchCall) batchResult {
	if err := c.Ctx.Err(); err != nil {
		return batchResult{err: err}
	}

	c.Size = len(c.Key) + len(c.value) + 64
	c.Done = make(chan batchResult, 1)

	if !b.q.PushStart(c, b.s.spawn) {
		return batchResult{err: errClosed}
	}

	return b.q.Wait(c)
}

// runBatch runs one statement and hands out its results. It acquires a
// connection until the latest deadline of its calls, then runs as exec
// does: not cancelled when callers give up (the others still want it, and
// cancelling would cost the connection), within the connect timeout.
func (b *batcher) runBatch(calls []*batchCall) {
	var (
		latest time.Time
		bound  = true
	)

	for _, c := range calls {
		d, ok := c.Ctx.Deadline()
		if !ok {
			bound = false

			break
		}

		if d.After(latest) {
			latest = d
		}
	}

	actx, cancel := context.WithCancel(b.s.ctx)
	if bound {
		actx, cancel = context.WithDeadline(b.s.ctx, latest)
	}
	defer cancel()

	var results map[string]batchResult

	attempt := func() error {
		conn, err := b.s.pool.Acquire(actx)
		if err != nil {
			return err
		}
		defer conn.Release()

		if err := abandoned(calls); err != nil {
			return err // every caller gave up while it waited: send nothing
		}

		qctx, qcancel := context.WithTimeout(b.s.ctx, b.s.st.connectTimeout)
		defer qcancel()

		results, err = b.run(qctx, conn, calls)

		return err
	}

	err := attempt()
	if err != nil && schemaMissing(err) && b.s.repairSchema(actx) == nil {
		err = attempt()
	}

	for _, c := range calls {
		if err != nil {
			c.Done <- batchResult{err: err}
		} else {
			c.Done <- results[c.Key]
		}
	}
}

// abandoned returns an error if every call of calls has ended.
func abandoned(calls []*batchCall) error {
	var err error
	for _, c := range calls {
		if err = c.Ctx.Err(); err == nil {
			return nil
		}
	}

	return err
}

// newReadBatcher returns the batcher of single-key reads (Get, and the
// reads of key watches): one SELECT of every key asked, with the snapshot
// it saw. The same key twice gets the same answer.
func newReadBatcher(s *Store) *batcher {
	return newBatcher(s, false, func(ctx context.Context, conn *pgxpool.Conn, calls []*batchCall) (map[string]batchResult, error) {
		keys := make([]string, len(calls))
		for i, c := range calls {
			keys[i] = c.Key
		}

		rows, err := conn.Query(ctx, s.q.readMany, keys)
		if err != nil {
			return nil, err
		}
		defer rows.Close()

		var (
			out  = make(map[string]batchResult, len(calls))
			snap string
		)

		for rows.Next() {
			var (
				k     *string
				value []byte
				idx   *int64
			)

			if err := rows.Scan(&snap, &k, &value, &idx); err != nil {
				return nil, err
			}

			if k != nil && idx != nil {
				out[*k] = batchResult{value: value, idx: *idx, found: true}
			}
		}

		if err := rows.Err(); err != nil {
			return nil, err
		}

		for _, k := range keys {
			r := out[k]
			r.snap = snap
			out[k] = r
		}

		return out, nil
	})
}

// newCASBatcher returns the batcher of AtomicPut with a previous pair: one
// UPDATE of every row whose index still matches.
func newCASBatcher(s *Store) *batcher {
	return newBatcher(s, true, func(ctx context.Context, conn *pgxpool.Conn, calls []*batchCall) (map[string]batchResult, error) {
		calls = byKey(calls)
		keys, values, ttls, owners := writeArrays(calls)

		prevs := make([]int64, len(calls))
		prevValues := make([][]byte, len(calls)) // nil: NULL, any value
		for i, c := range calls {
			prevs[i], prevValues[i] = c.prev, c.prevValue
		}

		return written(conn.Query(ctx, s.q.casMany, keys, values, prevs, ttls, owners, prevValues))
	})
}

// newCreateBatcher returns the batcher of AtomicPut without a previous
// pair: one INSERT of every key, which takes the keys absent or expired.
func newCreateBatcher(s *Store) *batcher {
	return newBatcher(s, true, func(ctx context.Context, conn *pgxpool.Conn, calls []*batchCall) (map[string]batchResult, error) {
		calls = byKey(calls)
		keys, values, ttls, owners := writeArrays(calls)

		return written(conn.Query(ctx, s.q.createMany, keys, values, ttls, owners))
	})
}

func writeArrays(calls []*batchCall) (keys []string, values [][]byte, ttls []*int64, owners []*string) {
	keys = make([]string, len(calls))
	values = make([][]byte, len(calls))
	ttls = make([]*int64, len(calls))
	owners = make([]*string, len(calls))

	for i, c := range calls {
		keys[i], values[i], ttls[i], owners[i] = c.Key, c.value, c.ttl, c.owner
	}

	return keys, values, ttls, owners
}

// written reads the (key, idx) rows of a batched write: the keys written
// and their new indexes.
func written(rows pgx.Rows, err error) (map[string]batchResult, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()

	out := make(map[string]batchResult)

	for rows.Next() {
		var (
			k string
			r = batchResult{found: true}
		)

		if err := rows.Scan(&k, &r.idx); err != nil {
			return nil, err
		}

		out[k] = r
	}

	return out, rows.Err()
}

// byKey returns the calls sorted by key, so that every write statement
// locks its rows in key order: two batches in flight on two connections
// that share keys then wait for one another instead of deadlocking (seen
// at 10,000 elections on one handle: "deadlock detected", SQLSTATE 40P01,
// when two statements had taken the same rows in opposite orders).
func byKey(calls []*batchCall) []*batchCall {
	sorted := slices.Clone(calls)
	slices.SortFunc(sorted, func(a, b *batchCall) int { return strings.Compare(a.Key, b.Key) })

	return sorted
}
