// Package postgres implements valkeyrie's store.Store on PostgreSQL (13 or
// later) with pgx, with the semantics of the embedded memory store.
//
// # Opening
//
// Open takes the servers' address as a DSN, a URL or key/value string as
// pgx and libpq take it (several hosts as h1:5432,h2:5432, tried in
// order), and optionally a Username and Password that replace its
// credentials:
//
//	kv, err := postgres.Open(ctx, postgres.Config{
//		DSN:   "postgres://user:pass@db:5432/app?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.crt",
//		Table: "leadership_kv",
//	})
//	if err != nil {
//		return err
//	}
//	defer kv.Close()
//
// Importing the package also registers the store with valkeyrie under
// StoreName ("leadership-postgres"), whose first endpoint is the DSN (see
// valkeyrie.go). Open pings the server within Config.DialTimeout
// (default 5s) and fails with an error matching store.ErrUnreachable, which wraps
// store.ErrNotReachable, when it cannot be reached. Within the same
// timeout it opens two pool connections and prepares the statements of
// reads, atomic writes and heartbeats on them, runs the table's triggers
// once on each (a write of its own, rolled back: no row is kept and no
// notification sent), and purges the rows that expired while no handle
// was open: a new server process, its caches, its statements and its
// compiled trigger functions cost a loaded server hundreds of
// milliseconds, which the first calls, under their callers' deadlines, no
// longer pay (a candidate that waits without writing paid the trigger
// functions on the write that took over: 12 ms instead of 2).
//
// # Schema
//
// Open creates what is missing, serialised by an advisory lock so that
// concurrent opens do not fail:
//
//	CREATE SEQUENCE <table>_idx AS bigint;
//	CREATE TABLE <table> (
//		key        text COLLATE "C" PRIMARY KEY,  -- trimmed of "/"
//		value      bytea NOT NULL,
//		idx        bigint NOT NULL,  -- nextval(<table>_idx) at every write
//		ttl_ms     bigint,           -- TTL, for renewals
//		expires_at timestamptz,      -- now() + TTL, by the server's clock
//		owner      text,             -- handle renewing the row, if any
//		lock_id    text              -- acquisition holding the row as a lock
//	);
//
// plus indexes on expires_at and owner, the functions <table>_event,
// <table>_before, <table>_after and <table>_truncate, and their triggers.
// The sequence is shared by every key, so LastIndex strictly increases and
// is never reused, even across a delete and re-create of a key (or of the
// table: the sequence is not owned by it). A row is live while expires_at
// is NULL or in the future: expired rows are invisible to every read at
// once, and purged (deleted, which notifies) by the first handle whose
// timer reaches the earliest expiry. Reads are always linearizable;
// ReadOptions are ignored. Keys are text: valid UTF-8 without NUL.
//
// # Least privilege
//
// A handle whose role does not own an existing table never changes the
// schema: it checks that the table, sequence, functions and triggers exist
// (else an error matching store.ErrPermission) and uses them. So an administrator may create
// the schema by opening the store once as the owner, and grant a
// candidate's role SELECT, INSERT, UPDATE and DELETE on the table and
// USAGE on its sequence, and a follower's role SELECT only (LISTEN needs
// no grant). Row-level security policies may keep each role to its keys.
// A role that may not delete leaves the purges of expired rows to others.
// Refusals are *RefusedError values matching store.ErrPermission (a statement
// the role may not run), store.ErrAuth (credentials, client certificate) or
// store.ErrTLS (a handshake that failed); they do not match
// store.ErrNotReachable. No error holds the DSN's password.
//
// # Notifications
//
// The AFTER trigger sends, in the writing transaction, one pg_notify per
// change on the channel (Config.Channel, default <table>_events):
//
//	op:idx:xid:lock:exp:value:key
//
// op is P (write) or D (delete, expiry), idx the index of the change (a
// deletion takes a fresh one), xid the writing transaction, lock its lock
// id, exp the milliseconds to expiry, value the new value in base64 when
// the payload stays under 8000 bytes ("-" otherwise). Keep-alive renewals
// keep idx and are not notified. An overwrite of an expired, not yet purged
// row is notified as its expiry then the write. A key too long for a
// payload, or a TRUNCATE, sends R: every watch of every handle resyncs.
// Changes made by hand must assign idx from the sequence to be seen.
//
// A notification is a hint and nothing more: any role that may connect to
// the database can send one on any channel (pg_notify needs no privilege),
// so nothing a payload carries is believed. A notification for a key makes
// its watches read the row again, wakes the Lock calls waiting on it, and
// has the locks held on it checked against their rows (liveLocks); the
// value, index and lock id it names are never delivered or acted on. A
// forged notification therefore costs a read, and changes nothing a watch
// delivers or a lock holder sees.
//
// Each handle has one dedicated listener connection (besides its pool),
// which fans notifications out to its watches, blocked Lock calls and held
// locks. A watch registers before its first read, which also returns the
// read's snapshot (pg_current_snapshot); notifications from transactions
// that snapshot already saw are dropped. The notifications that arrive
// together are followed by one read of the key, whose result is delivered
// if it differs from the last pair delivered: every change seen one at a
// time is delivered, in order; changes that come in a burst may be
// delivered as their final state only. None is lost between the read and
// the first event.
//
// # Liveness
//
// Each handle is one client with a random owner id. Keys written with a TTL
// and KeepAlive, and held locks, carry that id in owner; a keeper goroutine
// renews them all with one UPDATE (expires_at = now() + ttl) every TTL/3 of
// the smallest TTL owned, and runs the purges. Close behaves as a client
// that vanished: heartbeats stop, and what the handle kept alive expires
// one TTL after its last renewal, so between 2/3 TTL and one TTL after
// Close, producing watch events. The smallest TTL honoured, MinTTL, is 100ms; smaller
// positive TTLs are rounded up to it.
//
// A lock is its key's row with a lock_id and a TTL (default 15s). Lock
// takes it when the key is absent, not a lock, or expired, writing the
// lock value; otherwise it waits for a notification on the key (release,
// expiry, overwrite), re-checking at least every 2s. The lost channel
// closes when the lock is unlocked, deleted or overwritten (a notification
// on the key has the row read: the lock is lost when its lock id is no
// longer live there), or when its local deadline passes: the send time of the
// last successful renewal plus the TTL, which is never later than the
// row's expiry on the server. It therefore also closes after Close, or
// when the server cannot be reached, before anyone else can take the lock.
// Closing LockOptions.RenewLock clears the owner and sets the expiry one
// TTL ahead; the caller's channel is never closed by the store.
//
// # Load
//
// Single-key reads (Get, and the reads of key watches), compare-and-swaps
// and creates (AtomicPut) are batched: when calls of one kind come faster
// than their statements return, those waiting meanwhile go together in one
// statement over arrays (up to 256), whose rows succeed or fail each on
// its own, as if the calls had run one after the other. Idle, a call runs
// alone at once. A statement runs under the handle's context, not its
// caller's: a call whose context ends returns at once, and the statement
// finishes in the background (within DialTimeout), so that the
// connection stays in the pool (pgx closes a connection whose statement
// is interrupted). A thousand elections renewing on one handle with the
// default pool thus take a few statements in flight, not a queue of
// hundreds in front of every read.
//
// # Connection loss
//
// Calls fail with an error matching store.ErrUnreachable (errors.Is store.ErrNotReachable)
// while the server is unreachable; the pool reconnects on later calls. The
// listener checks its connection after 10s without notifications and
// reconnects with backoff (50ms to 2s) when it breaks. Notifications sent
// meanwhile are lost, so after reconnecting it LISTENs first, then every
// key watch re-reads its key and delivers the current state if it differs
// from the last pair delivered (a deletion seen that way has LastIndex 0),
// every tree watch delivers its current list, blocked Lock calls retry,
// and held locks are checked (lost if their row is gone). Watch channels
// stay open; they close only when their context ends or the handle closes.
//
// # Data loss
//
// A server restarted without its data (or a database restored, or the
// table dropped by hand) has lost the schema. A statement that finds the
// table, its sequence or a function missing (SQLSTATE 42P01, 42883)
// creates the schema again as Open does and is retried once; the calls
// that find it missing together share one re-creation, and a handle makes
// at most one attempt a second. The listener also checks the schema, the
// triggers included, each time it reconnects. Indexes then start again
// from 1 on the new sequence (the election engine recognises a store that
// went back), and a watch delivers the key's current state when it differs
// in value or index from the last one delivered.
package postgres
