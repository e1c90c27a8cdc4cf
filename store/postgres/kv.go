package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/kv"
)

// writeOpts returns the TTL honoured and whether this handle keeps the key
// alive.
func writeOpts(opts *store.WriteOptions) (time.Duration, bool) {
	if opts == nil {
		return 0, false
	}

	ttl := kv.EffectiveTTL(opts.TTL, minTTL)

	return ttl, ttl > 0 && opts.KeepAlive
}

// ownerArg is the owner column of a write: this handle when it keeps the
// row alive, NULL otherwise.
func (s *Store) ownerArg(keep bool) any {
	if keep {
		return s.id
	}

	return nil
}

// written schedules what a committed write with ttl needs: a purge at its
// expiry and, when kept alive, heartbeats. sent is when the write was sent.
func (s *Store) written(sent time.Time, ttl time.Duration, keep bool) {
	if ttl <= 0 {
		return
	}

	s.schedulePurge(time.Now().Add(ttl))

	if keep {
		s.scheduleHeartbeat(sent.Add(ttl/3), ttl)
	}
}

// Put writes value at key. With opts.TTL > 0 the key expires TTL after the
// write (by the server's clock), or, with opts.KeepAlive, TTL after this
// handle stops renewing it (Close, lost connection). A write without TTL
// makes the key persistent. Overwriting a lock's key releases the lock.
func (s *Store) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	k, c, done, err := s.beginKey(ctx, key)
	if err != nil {
		return err
	}
	defer done()

	ttl, keep := writeOpts(opts)
	sent := time.Now()

	var idx int64
	if err := s.queryRow(c, s.q.put, []any{k, nonNil(value), ttlMillis(ttl), s.ownerArg(keep), nil}, &idx); err != nil {
		return s.fail(ctx, "put", err)
	}

	s.written(sent, ttl, keep)

	return nil
}

// Get returns the pair at key, or store.ErrKeyNotFound. Reads always go to
// the server and are linearizable; ReadOptions are ignored.
func (s *Store) Get(ctx context.Context, key string, _ *store.ReadOptions) (*store.KVPair, error) {
	k, c, done, err := s.beginKey(ctx, key)
	if err != nil {
		return nil, err
	}
	defer done()

	p, err := s.get(c, k)
	if err != nil {
		return nil, s.fail(ctx, "get", err)
	}

	if p == nil {
		return nil, store.ErrKeyNotFound
	}

	return p, nil
}

// get reads the live pair at k (nil if none), in a batch with the other
// reads under way when k allows it.
func (s *Store) get(ctx context.Context, k string) (*store.KVPair, error) {
	if !batchable(k) {
		var (
			value []byte
			idx   int64
		)

		err := s.queryRow(ctx, s.q.get, []any{k}, &value, &idx)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}

		if err != nil {
			return nil, err
		}

		return &store.KVPair{Key: k, Value: nonNil(value), LastIndex: uint64(idx)}, nil
	}

	p, _, err := s.readBatched(ctx, k)
	if err != nil || p.Value == nil {
		return nil, err
	}

	return p, nil
}

// readBatched reads k in a batch with the other reads under way, and
// returns its pair (only Key set when it does not exist) and the snapshot
// of the read, unparsed.
func (s *Store) readBatched(ctx context.Context, k string) (*store.KVPair, string, error) {
	r := s.reads.do(newCall(ctx, k, nil))
	if r.err != nil {
		return nil, "", r.err
	}

	if !r.found {
		return &store.KVPair{Key: k}, r.snap, nil
	}

	return &store.KVPair{Key: k, Value: nonNil(r.value), LastIndex: uint64(r.idx)}, r.snap, nil
}

// Delete removes key, or returns store.ErrKeyNotFound.
func (s *Store) Delete(ctx context.Context, key string) error {
	k, c, done, err := s.beginKey(ctx, key)
	if err != nil {
		return err
	}
	defer done()

	n, err := s.execRows(c, s.q.del, k)
	if err != nil {
		return s.fail(ctx, "delete", err)
	}

	if n == 0 {
		return store.ErrKeyNotFound
	}

	return nil
}

// Exists reports whether key exists.
func (s *Store) Exists(ctx context.Context, key string, _ *store.ReadOptions) (bool, error) {
	k, c, done, err := s.beginKey(ctx, key)
	if err != nil {
		return false, err
	}
	defer done()

	var ok bool
	if err := s.queryRow(c, s.q.exists, []any{k}, &ok); err != nil {
		return false, s.fail(ctx, "exists", err)
	}

	return ok, nil
}

// List returns every key below directory, at any depth, sorted by key and
// excluding directory itself. It returns store.ErrKeyNotFound when neither
// directory nor anything below it exists.
func (s *Store) List(ctx context.Context, directory string, _ *store.ReadOptions) ([]*store.KVPair, error) {
	c, done, err := s.beginCall(ctx)
	if err != nil {
		return nil, err
	}
	defer done()

	dir := kv.NormalizeKey(directory)

	sql, args := s.q.listAll, []any(nil)
	if dir != "" {
		lo, hi := childRange(dir)
		sql, args = s.q.list, []any{lo, hi, dir}
	}

	var (
		pairs = []*store.KVPair{}
		found bool
	)

	err = s.queryAll(c, sql, args, func(rows pgx.Rows) error {
		var (
			k     string
			value []byte
			idx   int64
		)

		if err := rows.Scan(&k, &value, &idx); err != nil {
			return err
		}

		if k == dir {
			found = true
		} else {
			pairs = append(pairs, &store.KVPair{Key: k, Value: nonNil(value), LastIndex: uint64(idx)})
		}

		return nil
	})
	if err != nil {
		return nil, s.fail(ctx, "list", err)
	}

	if len(pairs) == 0 && !found {
		return nil, store.ErrKeyNotFound
	}

	return pairs, nil
}

// DeleteTree removes directory and every key below it ("" or "/": every
// key). Deleting nothing is not an error.
func (s *Store) DeleteTree(ctx context.Context, directory string) error {
	c, done, err := s.beginCall(ctx)
	if err != nil {
		return err
	}
	defer done()

	dir := kv.NormalizeKey(directory)
	if dir == "" {
		_, err = s.execRows(c, s.q.delAll)
	} else {
		lo, hi := childRange(dir)
		_, err = s.execRows(c, s.q.delTree, lo, hi, dir)
	}

	if err != nil {
		return s.fail(ctx, "delete tree", err)
	}

	return nil
}

// AtomicPut writes key if previous matches its current state: previous ==
// nil requires the key to be absent (else store.ErrKeyExists), otherwise
// the key must exist (else store.ErrKeyNotFound) with LastIndex equal to
// previous.LastIndex and, when previous.Value is not nil, its value equal
// to previous.Value, in one statement (else store.ErrKeyModified): a row
// written anew at an index handed out again (a database restored from an
// older backup, whose sequence went back) is not taken for the one
// previous was read from. opts apply as for Put. On success it returns
// the new pair, with its new index.
func (s *Store) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	k, c, done, err := s.beginKey(ctx, key)
	if err != nil {
		return false, nil, err
	}
	defer done()

	ttl, keep := writeOpts(opts)
	value = nonNil(value)
	sent := time.Now()

	var idx int64
	if previous == nil {
		err = s.create(c, k, value, ttl, keep, &idx)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil, store.ErrKeyExists
		}
	} else {
		prev, ok := index(previous.LastIndex)
		if !ok {
			return false, nil, s.casFailure(ctx, c, k)
		}

		err = s.cas(c, k, value, prev, previous.Value, ttl, keep, &idx)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil, s.casFailure(ctx, c, k)
		}
	}

	if err != nil {
		return false, nil, s.fail(ctx, "atomic put", err)
	}

	s.written(sent, ttl, keep)

	return true, &store.KVPair{Key: k, Value: kv.CloneBytes(value), LastIndex: uint64(idx)}, nil
}

// AtomicDelete deletes key if its LastIndex equals previous.LastIndex and,
// when previous.Value is not nil, its value equals previous.Value, in one
// statement: a row written anew at an index handed out again (a database
// restored from an older backup, whose sequence went back) is not taken
// for the one previous was read from. It returns
// store.ErrPreviousNotSpecified for a nil previous, store.ErrKeyNotFound
// for a missing key and store.ErrKeyModified on a mismatch.
func (s *Store) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	k, c, done, err := s.beginKey(ctx, key)
	if err != nil {
		return false, err
	}
	defer done()

	if previous == nil {
		return false, store.ErrPreviousNotSpecified
	}

	prev, ok := index(previous.LastIndex)
	if !ok {
		return false, s.casFailure(ctx, c, k)
	}

	var value any // NULL: any value
	if previous.Value != nil {
		value = previous.Value
	}

	n, err := s.execRows(c, s.q.atomicDel, k, prev, value)
	if err != nil {
		return false, s.fail(ctx, "atomic delete", err)
	}

	if n == 0 {
		return false, s.casFailure(ctx, c, k)
	}

	return true, nil
}

// cas writes value at k if its live row has index prev and, unless
// prevValue is nil, the value prevValue, and stores the new index in *idx;
// it returns pgx.ErrNoRows when there is no such row.
func (s *Store) cas(ctx context.Context, k string, value []byte, prev int64, prevValue []byte, ttl time.Duration, keep bool, idx *int64) error {
	if !batchable(k) {
		var pv any // NULL: any value
		if prevValue != nil {
			pv = prevValue
		}

		return s.queryRow(ctx, s.q.cas, []any{k, value, prev, ttlMillis(ttl), s.ownerArg(keep), pv}, idx)
	}

	c := s.writeCall(ctx, k, value, ttl, keep)
	c.prev, c.prevValue = prev, prevValue

	return s.writeBatched(s.cases, c, idx)
}

// create writes value at k if k is absent or expired, and stores the new
// index in *idx; it returns pgx.ErrNoRows when k exists.
func (s *Store) create(ctx context.Context, k string, value []byte, ttl time.Duration, keep bool, idx *int64) error {
	if !batchable(k) {
		return s.queryRow(ctx, s.q.create, []any{k, value, ttlMillis(ttl), s.ownerArg(keep), nil}, idx)
	}

	return s.writeBatched(s.creates, s.writeCall(ctx, k, value, ttl, keep), idx)
}

func (s *Store) writeCall(ctx context.Context, k string, value []byte, ttl time.Duration, keep bool) *batchCall {
	c := newCall(ctx, k, value)
	if ms, ok := ttlMillis(ttl).(int64); ok {
		c.ttl = &ms
	}

	if keep {
		c.owner = &s.id
	}

	return c
}

// writeBatched runs c with b, in a batch with the other writes of its kind
// under way.
func (s *Store) writeBatched(b *batcher, c *batchCall, idx *int64) error {
	r := b.do(c)
	if r.err != nil {
		return r.err
	}

	if !r.found {
		return pgx.ErrNoRows
	}

	*idx = r.idx

	return nil
}

// casFailure tells why a compare-and-swap on k matched no row.
func (s *Store) casFailure(ctx, c context.Context, k string) error {
	p, err := s.get(c, k)
	if err != nil {
		return s.fail(ctx, "atomic", err)
	}

	if p != nil {
		return store.ErrKeyModified
	}

	return store.ErrKeyNotFound
}
