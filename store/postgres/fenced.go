package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/kv"
)

var _ fenced.Putter = (*Store)(nil)

// FencedPut writes value at key, persistent (as Put without a TTL), if
// guardKey is live with index guard.LastIndex, in one statement: an
// INSERT ... ON CONFLICT DO UPDATE whose rows come from the guard row,
// read FOR SHARE, so that no write of the guard row comes between the
// check and the write. Otherwise nothing is written and the error matches
// fenced.ErrGuardChanged. Other failures are mapped as Put's.
func (s *Store) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	k, c, done, err := s.beginKey(ctx, key)
	if err != nil {
		return err
	}
	defer done()

	g := kv.NormalizeKey(guardKey)
	if g == "" {
		return ErrEmptyKey
	}

	var prev int64
	ok := guard != nil
	if ok {
		prev, ok = index(guard.LastIndex)
	}

	if !ok {
		return adapter.GuardChanged("postgres", key)
	}

	var idx int64
	err = s.queryRow(c, s.q.fencedPut, []any{k, nonNil(value), g, prev}, &idx)
	if errors.Is(err, pgx.ErrNoRows) {
		return adapter.GuardChanged("postgres", key)
	}

	if err != nil {
		return s.fail(ctx, "fenced put", err)
	}

	return nil
}
