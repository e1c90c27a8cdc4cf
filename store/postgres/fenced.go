package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/kv"
)

// FencedPut writes value at key, persistent (as Put without a TTL), if
// guardKey is live with index guard.LastIndex and value guard.Value, in
// one statement: an
// INSERT ... ON CONFLICT DO UPDATE whose rows come from the guard row,
// read FOR SHARE, so that no write of the guard row comes between the
// check and the write. Otherwise nothing is written and the error matches
// fenced.ErrGuardChanged. Other failures are mapped as Put's.
func (s *Store) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	k, g, prev, err := adapter.FenceArgs("postgres", key, guardKey, guard, keyName, index)
	if err != nil {
		return err
	}

	c, done, err := s.beginCall(ctx)
	if err != nil {
		return err
	}
	defer done()

	var idx int64
	err = s.queryRow(c, s.q.fencedPut, []any{k, nonNil(value), g, prev, nonNil(guard.Value)}, &idx)
	if errors.Is(err, pgx.ErrNoRows) {
		return adapter.GuardChanged("postgres", key)
	}

	if err != nil {
		return s.fail(ctx, "fenced put", err)
	}

	return nil
}

// keyName is the row key of key, or errEmptyKey.
func keyName(key string) (string, error) {
	if k := kv.NormalizeKey(key); k != "" {
		return k, nil
	}

	return "", errEmptyKey
}
