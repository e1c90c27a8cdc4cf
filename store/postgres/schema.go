package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// names are the quoted, schema-qualified names of the SQL objects behind
// one table.
type names struct {
	table    string // "schema"."table"
	seq      string // "schema"."table_idx": the global index sequence
	event    string // "schema"."table_event"(...): builds and sends one NOTIFY
	before   string // "schema"."table_before"(): BEFORE UPDATE row trigger
	after    string // "schema"."table_after"(): AFTER INSERT/UPDATE/DELETE row trigger
	truncate string // "schema"."table_truncate"(): AFTER TRUNCATE statement trigger
	expires  string // index on expires_at (unqualified, as CREATE INDEX wants)
	owner    string // index on owner (unqualified)
}

func newNames(schema, table string) names {
	q := func(suffix string) string { return pgx.Identifier{schema, table + suffix}.Sanitize() }

	return names{
		table:    q(""),
		seq:      q("_idx"),
		event:    q("_event"),
		before:   q("_before"),
		after:    q("_after"),
		truncate: q("_truncate"),
		expires:  pgx.Identifier{table + "_expires"}.Sanitize(),
		owner:    pgx.Identifier{table + "_owner"}.Sanitize(),
	}
}

// Trigger names (per table, so they need no prefix).
const (
	trgBefore   = "leadership_before"
	trgAfter    = "leadership_after"
	trgTruncate = "leadership_truncate"
)

// The payload of a notification is
//
//	op:idx:xid:lock:exp:val:key
//
// op is P (put), D (delete or expiry) or R (resync: something changed that
// the payload cannot describe); idx the index of the change; xid the writing
// transaction (pg_current_xact_id); lock the lock id of the new row (P) or
// of the deleted row (D), empty for a plain key; exp the milliseconds until
// the new row expires, empty without TTL; val the new value in base64, or
// "-" when it does not fit; key last, so
// it may contain colons. NOTIFY payloads must stay under 8000 bytes. Any
// role that may connect can send such a payload: readers take it as a hint
// to read the row, never as data (see "Notifications" in doc.go).
const eventFn = `
CREATE OR REPLACE FUNCTION %[1]s(ch text, op text, idx bigint, lk text, ex bigint, val text, k text)
RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
	head text := op || ':' || idx || ':' || pg_current_xact_id() || ':' || coalesce(lk, '') || ':' || coalesce(ex::text, '') || ':';
BEGIN
	IF val IS NOT NULL AND octet_length(head) + octet_length(val) + octet_length(k) < 7900 THEN
		PERFORM pg_notify(ch, head || val || ':' || k);
	ELSIF octet_length(head) + octet_length(k) < 7900 THEN
		PERFORM pg_notify(ch, head || '-:' || k);
	ELSE
		PERFORM pg_notify(ch, 'R:' || idx || ':' || pg_current_xact_id() || '::::');
	END IF;
END
$fn$`

// deleteEvent is the statement of a trigger function (%[2]s: eventFn's
// function) that reports the deletion of OLD's key, at an index of its
// own: a delete, an expiry, or the old key of an update that moved a row.
const deleteEvent = `PERFORM %[2]s(TG_ARGV[0], 'D', nextval(TG_ARGV[1]::regclass), OLD.lock_id, NULL, NULL, OLD.key);`

// beforeFn reports the expiry of a row being overwritten after its
// deadline but before a purge removed it, and gives the new row an index
// after the one of that expiry.
const beforeFn = `
CREATE OR REPLACE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
	IF NEW.idx IS DISTINCT FROM OLD.idx AND OLD.expires_at IS NOT NULL AND OLD.expires_at <= now() THEN
		` + deleteEvent + `
		NEW.idx := nextval(TG_ARGV[1]::regclass);
	END IF;
	RETURN NEW;
END
$fn$`

// afterFn sends one event per change. Updates that keep idx (keep-alive
// renewals) are not changes. A deletion takes its own index.
const afterFn = `
CREATE OR REPLACE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
	IF TG_OP = 'DELETE' THEN
		` + deleteEvent + `
		RETURN NULL;
	END IF;
	IF TG_OP = 'UPDATE' THEN
		IF NEW.key <> OLD.key THEN
			` + deleteEvent + `
		ELSIF NEW.idx = OLD.idx THEN
			RETURN NULL;
		END IF;
	END IF;
	PERFORM %[2]s(TG_ARGV[0], 'P', NEW.idx, NEW.lock_id,
		ceil(extract(epoch FROM NEW.expires_at - now()) * 1000)::bigint,
		CASE WHEN octet_length(NEW.value) <= 5600 THEN translate(encode(NEW.value, 'base64'), E'\n', '') END,
		NEW.key);
	RETURN NULL;
END
$fn$`

const truncateFn = `
CREATE OR REPLACE FUNCTION %[1]s() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
	PERFORM pg_notify(TG_ARGV[0], 'R:0:' || pg_current_xact_id() || '::::');
	RETURN NULL;
END
$fn$`

// advisoryKey is the advisory lock serialising schema creation for one table.
func advisoryKey(n names) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("github.com/leadership-go/leadership/store/postgres:" + n.table))

	return int64(h.Sum64()) //nolint:gosec // any 64 bits will do
}

// ensureSchema creates what is missing, idempotently and safely against
// concurrent calls (an advisory transaction lock serialises them). Existing
// objects are left alone, except the functions, which are replaced so that
// they match this version.
//
// A role that does not own an existing table (a least-privilege candidate
// or follower, see "Least privilege" in the package documentation) changes
// nothing: it checks that the schema is complete (else errSchemaIncomplete,
// in a *RefusedError) and that the triggers notify on channel.
func ensureSchema(ctx context.Context, tx pgx.Tx, n names, channel string) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", advisoryKey(n)); err != nil {
		return err
	}

	var exists, seqExists, owned bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL,
	coalesce((SELECT pg_has_role(relowner, 'USAGE') FROM pg_class WHERE oid = to_regclass($1)), true)`,
		n.table, n.seq).Scan(&exists, &seqExists, &owned); err != nil {
		return err
	}

	if exists && !owned {
		return useSchema(ctx, tx, n, channel)
	}

	var ddl []string
	if !seqExists {
		ddl = append(ddl, fmt.Sprintf("CREATE SEQUENCE IF NOT EXISTS %s AS bigint", n.seq))
		if exists {
			// Dropped under a table that stayed: start above its indexes.
			ddl = append(ddl, fmt.Sprintf("SELECT setval('%s', coalesce((SELECT max(idx) FROM %s), 0) + 1, false)", n.seq, n.table))
		}
	}

	if !exists {
		ddl = append(ddl,
			fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
	key        text COLLATE "C" PRIMARY KEY,
	value      bytea NOT NULL,
	idx        bigint NOT NULL,
	ttl_ms     bigint CHECK (ttl_ms > 0),
	expires_at timestamptz,
	owner      text,
	lock_id    text
)`, n.table),
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (expires_at) WHERE expires_at IS NOT NULL", n.expires, n.table),
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (owner) WHERE owner IS NOT NULL", n.owner, n.table),
		)
	}

	ddl = append(ddl,
		fmt.Sprintf(eventFn, n.event),
		fmt.Sprintf(beforeFn, n.before, n.event),
		fmt.Sprintf(afterFn, n.after, n.event),
		fmt.Sprintf(truncateFn, n.truncate),
	)

	for _, q := range ddl {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}

	return ensureTriggers(ctx, tx, n, channel)
}

// ensureTriggers creates the missing triggers and checks the channel of the
// existing ones.
func ensureTriggers(ctx context.Context, tx pgx.Tx, n names, channel string) error {
	rows, err := tx.Query(ctx, "SELECT tgname, tgargs FROM pg_trigger WHERE tgrelid = $1::regclass", n.table)
	if err != nil {
		return err
	}
	defer rows.Close()

	have := make(map[string][]byte)
	for rows.Next() {
		var name string
		var args []byte
		if err := rows.Scan(&name, &args); err != nil {
			return err
		}
		have[name] = args
	}

	if err := rows.Err(); err != nil {
		return err
	}

	if err := channelUnused(ctx, tx, n, channel); err != nil {
		return err
	}

	// Names are validated identifiers: they need no escaping inside literals.
	argsRow := fmt.Sprintf("'%s', '%s'", channel, n.seq)
	want := []struct{ name, ddl string }{
		{trgBefore, fmt.Sprintf("CREATE TRIGGER %s BEFORE UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION %s(%s)", trgBefore, n.table, n.before, argsRow)},
		{trgAfter, fmt.Sprintf("CREATE TRIGGER %s AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s(%s)", trgAfter, n.table, n.after, argsRow)},
		{trgTruncate, fmt.Sprintf("CREATE TRIGGER %s AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s('%s')", trgTruncate, n.table, n.truncate, channel)},
	}

	for _, w := range want {
		args, ok := have[w.name]
		if ok {
			got, _, _ := bytes.Cut(args, []byte{0})
			if string(got) != channel {
				return fmt.Errorf("%w: trigger %s on %s uses %q, configured %q", errChannelMismatch, w.name, n.table, got, channel)
			}

			continue
		}

		if _, err := tx.Exec(ctx, w.ddl); err != nil {
			return err
		}
	}

	return nil
}

// channelUnused checks that no other table of the database notifies on
// channel: notifications carry keys, not tables, so sharing a channel would
// mix the events of two tables.
func channelUnused(ctx context.Context, tx pgx.Tx, n names, channel string) error {
	rows, err := tx.Query(ctx, `SELECT t.tgrelid::regclass::text, t.tgargs FROM pg_trigger t
WHERE t.tgname = $2 AND t.tgrelid <> $1::regclass`, n.table, trgAfter)
	if err != nil {
		return err
	}
	defer rows.Close()

	for rows.Next() {
		var (
			table string
			args  []byte
		)

		if err := rows.Scan(&table, &args); err != nil {
			return err
		}

		if got, _, _ := bytes.Cut(args, []byte{0}); string(got) == channel {
			return fmt.Errorf("%w: channel %q is used by table %s; set Config.Channel", errChannelMismatch, channel, table)
		}
	}

	return rows.Err()
}

// schemaRepairEvery is how often, at most, a handle re-creates the schema:
// a call finding it missing within that time after an attempt takes that
// attempt's outcome (and retries once if it succeeded).
const schemaRepairEvery = time.Second

// schemaRepair is one re-creation of the schema, shared by every call that
// finds the schema missing while it runs.
type schemaRepair struct {
	done chan struct{} // closed when it ends
	err  error         // set before done closes
	at   time.Time     // when it ended
}

// useSchema checks, without changing anything, that the schema another
// role owns is complete and notifies on channel.
func useSchema(ctx context.Context, tx pgx.Tx, n names, channel string) error {
	var ok bool
	if err := tx.QueryRow(ctx, schemaCompleteSQL, schemaCompleteArgs(n)...).Scan(&ok); err != nil {
		return err
	}

	if !ok {
		return &RefusedError{Op: "open", Kind: errSchemaIncomplete, Err: fmt.Errorf("table %s", n.table)}
	}

	return ensureTriggers(ctx, tx, n, channel)
}

// schemaComplete reports whether the table, its sequence, functions and
// triggers all exist (a cheaper check than ensureSchema, which replaces the
// functions).
func (s *Store) schemaComplete(ctx context.Context) (bool, error) {
	var ok bool

	err := s.queryRow(ctx, schemaCompleteSQL, schemaCompleteArgs(s.n), &ok)

	return ok, err
}

// schemaCompleteSQL returns true when the objects schemaCompleteArgs
// names all exist.
const schemaCompleteSQL = `SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL
	AND to_regprocedure($3) IS NOT NULL AND to_regprocedure($4) IS NOT NULL
	AND to_regprocedure($5) IS NOT NULL AND to_regprocedure($6) IS NOT NULL
	AND (SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = ANY($7)) = 3`

// schemaCompleteArgs are the arguments of schemaCompleteSQL for n.
func schemaCompleteArgs(n names) []any {
	return []any{
		n.table, n.seq,
		n.event + "(text, text, bigint, text, bigint, text, text)",
		n.before + "()", n.after + "()", n.truncate + "()",
		[]string{trgBefore, trgAfter, trgTruncate},
	}
}

// schemaMissing reports whether err says that the table, its sequence or
// one of its functions does not exist.
func schemaMissing(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}

	switch pgErr.Code {
	case "42P01", "42883": // undefined_table, undefined_function
		return true
	}

	return false
}

// repairSchema creates the schema again (ensureSchema), for instance after
// the server restarted without its data. Concurrent calls share one
// attempt, whose outcome they wait for under ctx, and the next attempt is
// made schemaRepairEvery after the last one at the earliest (calls in
// between take the last one's outcome), so that a schema that cannot be
// created costs one attempt a second, not one per call.
func (s *Store) repairSchema(ctx context.Context) error {
	s.mu.Lock()
	r := s.repair
	recent := r != nil && (r.at.IsZero() || time.Since(r.at) < schemaRepairEvery)

	if !recent {
		r = &schemaRepair{done: make(chan struct{})}
		s.repair = r

		if !s.spawnLocked(func() { s.runRepair(r) }) {
			s.mu.Unlock()

			return errClosed
		}
	}
	s.mu.Unlock()

	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) runRepair(r *schemaRepair) {
	ctx, cancel := context.WithTimeout(s.ctx, s.st.connectTimeout)
	defer cancel()

	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return ensureSchema(ctx, tx, s.n, s.st.channel)
	})

	s.mu.Lock()
	r.err, r.at = err, time.Now()
	s.mu.Unlock()
	close(r.done)

	if err == nil {
		s.repaired.Add(1)
	}
}
