package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leadership-go/leadership/store/internal/kv"
)

const (
	// listenIdle is how long the listener waits for a notification before
	// checking that its connection is still alive.
	listenIdle = 10 * time.Second

	// listenRetry is how soon a failed check of held locks is retried.
	listenRetry = 500 * time.Millisecond
)

// connectListener opens the handle's dedicated connection and LISTENs.
func (s *Store) connectListener(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.connCfg.Copy())
	if err != nil {
		return nil, err
	}

	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.st.channel}.Sanitize()); err != nil {
		closeConn(conn)

		return nil, err
	}

	s.mu.Lock()
	s.listenerPID = conn.PgConn().PID()
	s.mu.Unlock()

	return conn, nil
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()

	_ = conn.Close(ctx)
}

// listen is the handle's listener goroutine: it receives the
// notifications of the table and fans them out, and reconnects when the
// connection breaks, then orders every watch to resync, wakes the blocked
// Lock calls and checks that the locks held are still held.
func (s *Store) listen(conn *pgx.Conn) {
	defer s.wg.Done()

	checkHeld := false

	for {
		if checkHeld {
			checkHeld = !s.verifyHeld()
		}

		wait := listenIdle
		if checkHeld {
			wait = listenRetry
		}

		wctx, cancel := context.WithTimeout(s.ctx, wait)
		n, err := conn.WaitForNotification(wctx)
		cancel()

		if err == nil {
			ok, check := s.dispatch(n.Payload)
			if !ok {
				s.resync()
			}

			checkHeld = checkHeld || check || !ok

			continue
		}

		if s.ctx.Err() != nil {
			closeConn(conn)

			return
		}

		if errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed() && s.ping(conn) == nil {
			continue // idle, and alive
		}

		closeConn(conn)

		s.mu.Lock()
		hook := s.beforeReconnect
		s.mu.Unlock()

		if hook != nil {
			hook()
		}

		if conn = s.reconnect(); conn == nil {
			return
		}

		s.checkSchema()
		s.resync()
		checkHeld = true
	}
}

// checkSchema creates the schema again if the server lost it (restarted
// without its data, say): the listener calls it after reconnecting, so that
// a missing trigger, which no statement would report, is put back too.
func (s *Store) checkSchema() {
	ctx, cancel := context.WithTimeout(s.ctx, s.st.connectTimeout)
	defer cancel()

	if ok, err := s.schemaComplete(ctx); err == nil && !ok {
		_ = s.repairSchema(ctx)
	}
}

func (s *Store) ping(conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.st.connectTimeout)
	defer cancel()

	return conn.Ping(ctx)
}

// reconnect opens a new listener connection, retrying with backoff until it
// succeeds or the handle closes (then it returns nil).
func (s *Store) reconnect() *pgx.Conn {
	var conn *pgx.Conn

	err := retry(s.ctx, func() error {
		ctx, cancel := context.WithTimeout(s.ctx, s.st.connectTimeout)
		defer cancel()

		c, err := s.connectListener(ctx)
		conn = c

		return err
	})
	if err != nil {
		return nil
	}

	return conn
}

// dispatch hands one notification to whom it concerns. It returns false
// when the notification cannot be followed (a resync is then needed), and
// check when a lock this handle holds must be verified.
//
// A notification is only a hint: any role that may connect can send one on
// the channel (pg_notify), so nothing it carries is believed. It wakes the
// blocked Lock calls of its key, makes the watches of its key or directory
// read the rows again (one read per batch of notifications, and none for a
// notification the watch's last read already reflects), and has the locks
// held on its key checked against their rows. Its expiry only brings the
// next purge forward, and a purge deletes only what the server's clock says
// has expired.
func (s *Store) dispatch(payload string) (ok, check bool) {
	ev, err := parseEvent(payload)
	if err != nil || ev.op == opResync {
		return false, false
	}

	if ev.hasExp {
		s.schedulePurge(time.Now().Add(time.Duration(max(ev.expMs, 0)) * time.Millisecond))
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	s.waiters.Wake(ev.key)

	for h := range s.held[ev.key] {
		if ev.op == opPut && ev.lockID == h.id {
			continue // the acquisition itself (a forgery of it changes nothing)
		}

		if h.pending {
			h.verify = true
		} else {
			check = true // deleted, expired, overwritten or unlocked?
		}
	}

	for w := range s.keyWatches[ev.key] {
		w.push(keyItem{xid: ev.xid, del: ev.op == opDelete, idx: ev.idx})
	}

	for w := range s.treeWatches {
		if kv.Under(ev.key, w.dir) {
			w.q.Push(treeItem{xid: ev.xid})
		}
	}

	return true, check
}

// resync is called when notifications may have been missed: every watch
// re-reads its state, blocked Lock calls retry, pending acquisitions verify
// themselves, and expired rows are purged.
func (s *Store) resync() {
	s.mu.Lock()
	defer s.mu.Unlock()

	for _, set := range s.keyWatches {
		for w := range set {
			w.push(keyItem{resync: true})
		}
	}

	for w := range s.treeWatches {
		w.q.Push(treeItem{resync: true})
	}

	s.waiters.WakeAll()

	for _, set := range s.held {
		for h := range set {
			if h.pending {
				h.verify = true
			}
		}
	}

	s.schedulePurgeLocked(time.Now())
}

// verifyHeld checks that the locks this handle holds are still its own and
// releases those that are not. It reports whether the check was done.
func (s *Store) verifyHeld() bool {
	s.mu.Lock()
	ids := make([]string, 0, len(s.heldByID))
	for id := range s.heldByID {
		ids = append(ids, id)
	}
	s.mu.Unlock()

	if len(ids) == 0 {
		return true
	}

	alive, err := s.liveLocks(ids)
	if err != nil {
		return false
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	for _, id := range ids {
		if h := s.heldByID[id]; h != nil && !alive[id] {
			s.loseLocked(h)
		}
	}

	return true
}

// liveLocks returns which of the lock ids are held.
func (s *Store) liveLocks(ids []string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.st.connectTimeout)
	defer cancel()

	out := make(map[string]bool, len(ids))

	err := s.queryAll(ctx, s.q.liveLocks, []any{ids}, func(rows pgx.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}

		out[id] = true

		return nil
	})
	if err != nil {
		return nil, err
	}

	return out, nil
}

// ListenerPID returns the server process id of the handle's listener
// connection (for diagnostics, e.g. pg_stat_activity).
func (s *Store) ListenerPID() uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()

	return s.listenerPID
}
