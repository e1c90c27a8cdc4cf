package postgres

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	// maxBatchCalls and maxBatchBytes bound one statement made of
	// concurrent calls.
	maxBatchCalls = 256
	maxBatchBytes = 1 << 20

	// maxSenders is how many statements of one kind a handle runs at once.
	// A call finding them all busy waits for the next one, which takes
	// every call waiting by then (up to maxBatchCalls).
	maxSenders = 2
)

// batcher runs calls of one kind (single-key reads, compare-and-swaps,
// creates) as single statements over arrays: alone when the handle is
// idle, and when calls come faster than statements return, the calls
// waiting meanwhile together, up to maxBatchCalls in one statement.
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
	// distinct: a batch holds at most one call per key.
	distinct bool

	mu      sync.Mutex
	queue   []*batchCall
	senders int
}

// batchCall is one call: a key and, for a compare-and-swap, the new row.
type batchCall struct {
	ctx   context.Context
	key   string
	value []byte
	prev  int64  // index the row must have
	ttl   *int64 // milliseconds, nil for none
	owner *string
	done  chan batchResult // capacity 1
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

// batchable reports whether key can go in a batch: a key the server
// rejects (invalid UTF-8, NUL) would fail every call of its batch, so it
// runs alone.
func batchable(key string) bool {
	return utf8.ValidString(key) && !strings.ContainsRune(key, 0)
}

// do runs c within c.ctx. After c.ctx ends it returns c.ctx's error at
// once; the statement may still run (a write's outcome is then unknown,
// as for any call cut short).
func (b *batcher) do(c *batchCall) batchResult {
	if err := c.ctx.Err(); err != nil {
		return batchResult{err: err}
	}

	c.done = make(chan batchResult, 1)

	b.mu.Lock()
	b.queue = append(b.queue, c)
	if b.senders < maxSenders {
		if !b.s.spawn(b.send) {
			b.queue = b.queue[:len(b.queue)-1]
			b.mu.Unlock()

			return batchResult{err: ErrClosed}
		}

		b.senders++
	}
	b.mu.Unlock()

	select {
	case r := <-c.done:
		return r
	case <-c.ctx.Done():
		select {
		case r := <-c.done: // finished at the same moment: the result stands
			return r
		default:
		}

		return batchResult{err: c.ctx.Err()}
	}
}

// send runs statements while calls are waiting.
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

		b.runBatch(batch)
	}
}

// take removes the next batch from the queue: calls whose context ended
// are answered and dropped.
func (b *batcher) take() []*batchCall {
	var (
		batch, rest []*batchCall
		keys        = map[string]bool{}
		size        int
	)

	for _, c := range b.queue {
		if err := c.ctx.Err(); err != nil {
			c.done <- batchResult{err: err}

			continue
		}

		n := len(c.key) + len(c.value) + 64
		if len(batch) == maxBatchCalls || (b.distinct && keys[c.key]) || (len(batch) > 0 && size+n > maxBatchBytes) {
			rest = append(rest, c)

			continue
		}

		keys[c.key] = true
		size += n
		batch = append(batch, c)
	}

	b.queue = rest

	return batch
}

// runBatch runs one statement and hands out its results. It acquires a
// connection until the latest deadline of its calls, then runs as exec
// does: not cancelled when callers give up (the others still want it, and
// cancelling would cost the connection), within the connect timeout.
func (b *batcher) runBatch(batch []*batchCall) {
	var (
		latest time.Time
		bound  = true
	)

	for _, c := range batch {
		d, ok := c.ctx.Deadline()
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

		if err := abandoned(batch); err != nil {
			return err // every caller gave up while it waited: send nothing
		}

		qctx, qcancel := context.WithTimeout(b.s.ctx, b.s.st.connectTimeout)
		defer qcancel()

		results, err = b.run(qctx, conn, batch)

		return err
	}

	err := attempt()
	if err != nil && schemaMissing(err) && b.s.repairSchema(actx) == nil {
		err = attempt()
	}

	for _, c := range batch {
		if err != nil {
			c.done <- batchResult{err: err}
		} else {
			c.done <- results[c.key]
		}
	}
}

// abandoned returns an error if every call of batch has ended.
func abandoned(batch []*batchCall) error {
	var err error
	for _, c := range batch {
		if err = c.ctx.Err(); err == nil {
			return nil
		}
	}

	return err
}

// newReadBatcher returns the batcher of single-key reads (Get, and the
// reads of key watches): one SELECT of every key asked, with the snapshot
// it saw. The same key twice gets the same answer.
func newReadBatcher(s *Store) *batcher {
	return &batcher{s: s, run: func(ctx context.Context, conn *pgxpool.Conn, batch []*batchCall) (map[string]batchResult, error) {
		keys := make([]string, len(batch))
		for i, c := range batch {
			keys[i] = c.key
		}

		rows, err := conn.Query(ctx, s.q.readMany, keys)
		if err != nil {
			return nil, err
		}
		defer rows.Close()

		var (
			out  = make(map[string]batchResult, len(batch))
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
	}}
}

// newCASBatcher returns the batcher of AtomicPut with a previous pair: one
// UPDATE of every row whose index still matches.
func newCASBatcher(s *Store) *batcher {
	return &batcher{s: s, distinct: true, run: func(ctx context.Context, conn *pgxpool.Conn, batch []*batchCall) (map[string]batchResult, error) {
		keys, values, ttls, owners := writeArrays(batch)

		prevs := make([]int64, len(batch))
		for i, c := range batch {
			prevs[i] = c.prev
		}

		return written(conn.Query(ctx, s.q.casMany, keys, values, prevs, ttls, owners))
	}}
}

// newCreateBatcher returns the batcher of AtomicPut without a previous
// pair: one INSERT of every key, which takes the keys absent or expired.
func newCreateBatcher(s *Store) *batcher {
	return &batcher{s: s, distinct: true, run: func(ctx context.Context, conn *pgxpool.Conn, batch []*batchCall) (map[string]batchResult, error) {
		keys, values, ttls, owners := writeArrays(batch)

		return written(conn.Query(ctx, s.q.createMany, keys, values, ttls, owners))
	}}
}

func writeArrays(batch []*batchCall) (keys []string, values [][]byte, ttls []*int64, owners []*string) {
	keys = make([]string, len(batch))
	values = make([][]byte, len(batch))
	ttls = make([]*int64, len(batch))
	owners = make([]*string, len(batch))

	for i, c := range batch {
		keys[i], values[i], ttls[i], owners[i] = c.key, c.value, c.ttl, c.owner
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
