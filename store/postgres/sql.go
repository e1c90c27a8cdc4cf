package postgres

import "fmt"

// queries holds the SQL of one table. Every statement aliases the table as
// t; a row is live while t.expires_at is NULL or in the future by the
// server's clock. Expired rows are invisible at once and purged later.
type queries struct {
	get, readMany, exists          string
	put, create, cas               string
	createMany, casMany            string
	fencedPut                      string
	del, atomicDel                 string
	list, listAll                  string
	delTree, delAll                string
	lock, unlockDelete, unlockKeep string
	stopRenew, heartbeat, purge    string
	watchKey, watchTree, watchAll  string
	liveLocks                      string
}

const live = "(t.expires_at IS NULL OR t.expires_at > now())"

func newQueries(n names) queries {
	tbl, seq := n.table, n.seq
	next := fmt.Sprintf("nextval('%s')", seq)

	// overwrite is the conflict clause of the inserts that replace a row.
	overwrite := fmt.Sprintf(`ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, idx = %s, ttl_ms = EXCLUDED.ttl_ms,
	expires_at = EXCLUDED.expires_at, owner = EXCLUDED.owner, lock_id = EXCLUDED.lock_id`, next)
	insert := fmt.Sprintf("INSERT INTO %s AS t (key, value, idx, ttl_ms, expires_at, owner, lock_id)\n", tbl)

	// upsert writes $1 key, $2 value, $3 ttl_ms, $4 owner, $5 lock_id.
	upsert := insert + fmt.Sprintf(`VALUES ($1, $2, %s, $3::bigint, now() + $3::bigint * interval '1 millisecond', $4::text, $5::text)
`, next) + overwrite

	snap := "(SELECT pg_current_snapshot()::text AS snap) s"

	return queries{
		get: fmt.Sprintf("SELECT t.value, t.idx FROM %s t WHERE t.key = $1 AND %s", tbl, live),
		// readMany reads the keys of the text[] $1, with the snapshot of
		// the read: one row per live key, or one with a NULL key if none.
		readMany: fmt.Sprintf("SELECT s.snap, t.key, t.value, t.idx FROM %s LEFT JOIN %s t ON t.key = ANY($1::text[]) AND %s", snap, tbl, live),
		exists:   fmt.Sprintf("SELECT EXISTS (SELECT 1 FROM %s t WHERE t.key = $1 AND %s)", tbl, live),

		put:    upsert + " RETURNING t.idx",
		create: upsert + " WHERE t.expires_at IS NOT NULL AND t.expires_at <= now() RETURNING t.idx",
		cas: fmt.Sprintf(`UPDATE %s t SET value = $2, idx = %s, ttl_ms = $4::bigint,
	expires_at = now() + $4::bigint * interval '1 millisecond', owner = $5::text, lock_id = NULL
WHERE t.key = $1 AND t.idx = $3 AND ($6::bytea IS NULL OR t.value = $6::bytea) AND %s RETURNING t.idx`, tbl, next, live),

		// casMany is cas over arrays: $1 keys (distinct), $2 values, $3
		// previous indexes, $4 TTLs (ms, NULL for none), $5 owners, $6
		// previous values (NULL: any value; cas's $6 likewise).
		casMany: fmt.Sprintf(`UPDATE %s t SET value = v.value, idx = %s, ttl_ms = v.ttl,
	expires_at = now() + v.ttl * interval '1 millisecond', owner = v.owner, lock_id = NULL
FROM unnest($1::text[], $2::bytea[], $3::bigint[], $4::bigint[], $5::text[], $6::bytea[]) AS v(key, value, prev, ttl, owner, prevval)
WHERE t.key = v.key AND t.idx = v.prev AND (v.prevval IS NULL OR t.value = v.prevval) AND %s RETURNING t.key, t.idx`, tbl, next, live),
		// createMany is create over arrays: $1 keys (distinct), $2 values,
		// $3 TTLs, $4 owners.
		createMany: insert + fmt.Sprintf(`SELECT v.key, v.value, %s, v.ttl, now() + v.ttl * interval '1 millisecond', v.owner, NULL
FROM unnest($1::text[], $2::bytea[], $3::bigint[], $4::text[]) AS v(key, value, ttl, owner)
`, next) + overwrite + `
WHERE t.expires_at IS NOT NULL AND t.expires_at <= now() RETURNING t.key, t.idx`,

		// fencedPut writes $1 key, $2 value, persistent, if the guard row
		// $3 is live with index $4 and value $5. The guard row is locked FOR SHARE
		// until the statement commits: a concurrent write of it is waited
		// for and the row checked again in its new version (READ
		// COMMITTED), and no write of it can come before this one
		// commits. No row is returned when the guard does not hold.
		fencedPut: fmt.Sprintf(`WITH g AS (SELECT 1 FROM %s t WHERE t.key = $3::text AND t.idx = $4::bigint AND t.value = $5::bytea AND %s FOR SHARE)
`, tbl, live) + insert + fmt.Sprintf(`SELECT $1::text, $2::bytea, %s, NULL, NULL, NULL, NULL FROM g
`, next) + overwrite + " RETURNING t.idx",

		del: fmt.Sprintf("DELETE FROM %s t WHERE t.key = $1 AND %s", tbl, live),
		// atomicDel deletes $1 if its index is $2 and, unless $3 is NULL,
		// its value is $3.
		atomicDel: fmt.Sprintf("DELETE FROM %s t WHERE t.key = $1 AND t.idx = $2 AND ($3::bytea IS NULL OR t.value = $3::bytea) AND %s", tbl, live),

		// $1 = dir + "/", $2 = dir + "0": the keys below dir in byte order.
		list:    fmt.Sprintf("SELECT t.key, t.value, t.idx FROM %s t WHERE (t.key = $3 OR (t.key >= $1 AND t.key < $2)) AND %s ORDER BY t.key", tbl, live),
		listAll: fmt.Sprintf("SELECT t.key, t.value, t.idx FROM %s t WHERE %s ORDER BY t.key", tbl, live),
		delTree: fmt.Sprintf("DELETE FROM %s t WHERE t.key = $3 OR (t.key >= $1 AND t.key < $2)", tbl),
		delAll:  fmt.Sprintf("DELETE FROM %s t", tbl),

		// lock returns the new index when acquired (NULL otherwise) and the
		// milliseconds left to the current holder.
		lock: fmt.Sprintf(`WITH ins AS (%s
	WHERE t.lock_id IS NULL OR (t.expires_at IS NOT NULL AND t.expires_at <= now())
	RETURNING t.idx)
SELECT (SELECT idx FROM ins),
	(SELECT ceil(extract(epoch FROM t.expires_at - now()) * 1000)::bigint FROM %s t WHERE t.key = $1)`, upsert, tbl),
		unlockDelete: fmt.Sprintf("DELETE FROM %s t WHERE t.key = $1 AND t.lock_id = $2 AND %s", tbl, live),
		unlockKeep: fmt.Sprintf(`UPDATE %s t SET idx = %s, ttl_ms = NULL, expires_at = NULL, owner = NULL, lock_id = NULL
WHERE t.key = $1 AND t.lock_id = $2 AND %s`, tbl, next, live),

		// stopRenew hands a lock over to its TTL: nobody renews it any more.
		stopRenew: fmt.Sprintf(`UPDATE %s t SET owner = NULL, expires_at = now() + t.ttl_ms * interval '1 millisecond'
WHERE t.lock_id = $1 AND %s RETURNING t.ttl_ms`, tbl, live),
		heartbeat: fmt.Sprintf(`UPDATE %s t SET expires_at = now() + t.ttl_ms * interval '1 millisecond'
WHERE t.owner = $1 AND t.expires_at > now() RETURNING t.ttl_ms, t.lock_id`, tbl),
		// purge returns the number of rows purged and the milliseconds until
		// the next expiry (NULL if none).
		purge: fmt.Sprintf(`WITH d AS (DELETE FROM %[1]s t WHERE t.expires_at <= now() RETURNING 1)
SELECT (SELECT count(*) FROM d),
	(SELECT ceil(extract(epoch FROM min(t.expires_at) - now()) * 1000)::bigint FROM %[1]s t WHERE t.expires_at > now())`, tbl),

		watchKey:  fmt.Sprintf("SELECT s.snap, t.value, t.idx FROM %s LEFT JOIN %s t ON t.key = $1 AND %s", snap, tbl, live),
		watchTree: fmt.Sprintf("SELECT s.snap, t.key, t.value, t.idx FROM %s LEFT JOIN %s t ON t.key >= $1 AND t.key < $2 AND %s ORDER BY t.key", snap, tbl, live),
		watchAll:  fmt.Sprintf("SELECT s.snap, t.key, t.value, t.idx FROM %s LEFT JOIN %s t ON %s ORDER BY t.key", snap, tbl, live),

		liveLocks: fmt.Sprintf("SELECT t.lock_id FROM %s t WHERE t.lock_id = ANY($1) AND %s", tbl, live),
	}
}
