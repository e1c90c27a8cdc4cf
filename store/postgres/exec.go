package postgres

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// exec runs f, one statement or a few, on a connection of the pool.
//
// The connection is acquired under ctx: a call that gives up while waiting
// for one sends nothing. The statements then run under a context of their
// own, which follows the handle (Close interrupts them) but not ctx: when
// ctx ends first, exec returns ctx's error at once and f completes in the
// background, within the handle's connect timeout, before the connection
// goes back to the pool.
//
// Without this a call that times out mid-statement makes pgx close its
// connection (it interrupts a statement by setting a past deadline on the
// socket), and the pool opens a new one on a later call. Under load, when
// calls wait for the pool longer than their deadlines, that turned every
// timeout into a reconnection (a server process forked, authentication,
// statements prepared again) on the few connections the pool has: the
// pool spent its time reconnecting, more calls timed out, and a thousand
// elections on one handle could not all start.
//
// f must not touch what the caller reads after a failed call: it may run
// after exec returned.
func (s *Store) exec(ctx context.Context, f func(ctx context.Context, conn *pgxpool.Conn) error) error {
	_, err := s.execTracked(ctx, f)

	return err
}

// execTracked is exec, and also returns a channel closed once f is not
// running and will not run any more: when a call failed, what f did is
// settled then.
func (s *Store) execTracked(ctx context.Context, f func(ctx context.Context, conn *pgxpool.Conn) error) (<-chan struct{}, error) {
	fin, err := s.execOnce(ctx, f)
	if err == nil || !schemaMissing(err) || ctx.Err() != nil {
		return fin, err
	}

	// The table or one of its functions is gone: the server lost its data
	// (restarted empty, restored) or someone dropped them. Create the
	// schema again and retry once. (f returned: fin is closed.)
	if rerr := s.repairSchema(ctx); rerr != nil {
		return fin, err
	}

	return s.execOnce(ctx, f)
}

func (s *Store) execOnce(ctx context.Context, f func(ctx context.Context, conn *pgxpool.Conn) error) (<-chan struct{}, error) {
	fin := make(chan struct{})

	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		close(fin)

		return fin, err
	}

	if err := ctx.Err(); err != nil {
		conn.Release()
		close(fin)

		return fin, err
	}

	qctx, cancel := context.WithCancel(s.ctx)
	done := make(chan error, 1)

	var grace atomic.Pointer[time.Timer]

	started := s.spawn(func() {
		defer close(fin)

		err := f(qctx, conn)

		if t := grace.Load(); t != nil {
			t.Stop()
		}

		cancel()
		conn.Release()

		done <- err
	})
	if !started {
		cancel()
		conn.Release()
		close(fin)

		return fin, errClosed
	}

	select {
	case err := <-done:
		return fin, err
	case <-ctx.Done():
		// Let the statement finish, but not forever (a server that stopped
		// answering).
		grace.Store(time.AfterFunc(s.st.connectTimeout, cancel))

		return fin, ctx.Err()
	}
}

// queryRow runs a statement returning one row and scans it into dest
// (pgx.ErrNoRows when there is none).
func (s *Store) queryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	return s.exec(ctx, func(ctx context.Context, conn *pgxpool.Conn) error {
		return conn.QueryRow(ctx, sql, args...).Scan(dest...)
	})
}

// execRows runs a statement returning no rows and returns how many rows it
// affected.
func (s *Store) execRows(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64

	err := s.exec(ctx, func(ctx context.Context, conn *pgxpool.Conn) error {
		tag, err := conn.Exec(ctx, sql, args...)
		n = tag.RowsAffected()

		return err
	})
	if err != nil {
		return 0, err // n may still be written: f can outlive a failed call
	}

	return n, nil
}

// queryAll runs a statement and calls scan for each row it returns.
func (s *Store) queryAll(ctx context.Context, sql string, args []any, scan func(pgx.Rows) error) error {
	return s.exec(ctx, func(ctx context.Context, conn *pgxpool.Conn) error {
		rows, err := conn.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()

		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}

		return rows.Err()
	})
}
