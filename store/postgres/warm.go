package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// warmConns is how many pool connections Open opens and runs warmBatch on
// before it returns (fewer if Config.MaxConns is smaller): enough for a
// read and a write at once beside the keeper.
const warmConns = 2

// warmBatch returns statements that prepare, on the connection that runs
// them, what the calls of a handle use most (Get, AtomicPut, Delete, key
// watches' reads, the keeper's heartbeat), without changing any row:
// the arrays are empty, the key "" never exists (keys are trimmed of "/"
// and never empty) and nothing is owned by this handle yet. pgx caches a
// statement the first time it runs on a connection, so the calls that
// follow send theirs in one round trip.
func (s *Store) warmBatch() *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(s.q.readMany, []string{})
	b.Queue(s.q.casMany, []string{}, [][]byte{}, []int64{}, []*int64{}, []*string{}, [][]byte{})
	b.Queue(s.q.createMany, []string{}, [][]byte{}, []*int64{}, []*string{})
	b.Queue(s.q.del, "")
	b.Queue(s.q.heartbeat, s.id)

	return b
}

// warm opens the pool's first connections, prepares the hot statements on
// each (warmBatch) and purges what expired while nobody watched, all within Open's
// connect timeout, so that the first calls find connections ready.
//
// Without it the first calls of a new handle paid for what a PostgreSQL
// connection costs once: a server process forked and authenticated, its
// catalog caches filled, each statement parsed and planned before it runs.
// On an idle machine that is a few milliseconds; on a loaded one it was
// measured at 130-680ms for one Get, beyond a candidate's request timeout
// (TTL/3, 667ms at a TTL of 2s), so that RunForElection on a new client
// failed. The keeper's first purge, which ran as Open returned, made it
// worse: it held the one open connection, so the first call had to open
// another.
func (s *Store) warm(ctx context.Context) error {
	n := min(warmConns, int(s.pool.Config().MaxConns))

	conns := make([]*pgxpool.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()

	// Held together, so that each Acquire opens a connection of its own.
	for range n {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			return err
		}

		conns = append(conns, c)
	}

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs error
	)

	for _, c := range conns {
		wg.Go(func() {
			if err := c.SendBatch(ctx, s.warmBatch()).Close(); err != nil {
				mu.Lock()
				errs = err
				mu.Unlock()

				return
			}

			s.warmTriggers(ctx, c)
		})
	}

	wg.Wait()

	// A role without the privileges of a candidate (a follower's, which
	// may only read) cannot run every statement: warming is an
	// optimisation, and its calls will report what they may not do.
	if errs != nil && !denied(errs) {
		return errs
	}

	var (
		purged int64
		nextMs *int64
	)

	err := conns[0].QueryRow(ctx, s.q.purge).Scan(&purged, &nextMs)
	s.purgeAt = s.nextPurge(err, nextMs)

	if denied(err) {
		return nil // a role that may not delete leaves the purges to others
	}

	return err
}

// denied reports whether err is the server's refusal of a statement the
// role has no privilege for (SQLSTATE 42501).
func denied(err error) bool {
	var pgErr *pgconn.PgError

	return errors.As(err, &pgErr) && pgErr.Code == "42501"
}

// nextPurge returns when to purge next after a purge that returned err
// and the milliseconds to the earliest expiry left (nil: none).
func (s *Store) nextPurge(err error, nextMs *int64) time.Time {
	now := time.Now() // after the server's now(): never early

	switch {
	case denied(err): // not this role's job: try again rarely
		return now.Add(purgeSafety)
	case err != nil:
		return now.Add(purgeRetry)
	case nextMs != nil:
		return now.Add(min(time.Duration(*nextMs)*time.Millisecond, purgeSafety))
	default:
		return now.Add(purgeSafety)
	}
}

// warmTriggers runs, on c, a create, a compare-and-swap and a delete of a
// key of this handle's own inside a transaction that it rolls back:
// nothing is kept and no NOTIFY is sent (PostgreSQL sends them at
// commit), but the table's triggers have run once on the connection.
//
// A server process compiles a PL/pgSQL function the first time it calls
// it, and warmBatch changes no row, so no trigger fired: the first write
// of each connection paid for compiling the table's trigger functions.
// Measured on a fresh handle: 12 ms for its first AtomicPut, 1.7 ms for
// the next. A candidate that waits without writing (a waiter) then paid
// it on the write that takes over, where it counts: the cross-process
// handoff's acquire took 10-12 ms on PostgreSQL against 2.5-3.6 ms on the
// other backends. Warming is best-effort: a role that may not write (a
// follower's) or any other failure leaves the first write to pay it.
func (s *Store) warmTriggers(ctx context.Context, c *pgxpool.Conn) {
	tx, err := c.Begin(ctx)
	if err != nil {
		return
	}

	defer func() { _ = tx.Rollback(ctx) }()

	k := "leadership-warm-up/" + s.id // never committed, so never seen

	var (
		key string
		idx int64
	)

	if tx.QueryRow(ctx, s.q.createMany, []string{k}, [][]byte{{}}, []*int64{nil}, []*string{nil}).Scan(&key, &idx) != nil {
		return
	}

	if tx.QueryRow(ctx, s.q.casMany, []string{k}, [][]byte{{}}, []int64{idx}, []*int64{nil}, []*string{nil}, [][]byte{nil}).Scan(&key, &idx) != nil {
		return
	}

	_, _ = tx.Exec(ctx, s.q.del, k)
}
