package memory

import (
	"bytes"
	"context"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/kv"
)

var _ fenced.Putter = (*Store)(nil)

// FencedPut writes value at key only if guardKey still holds guard: its
// LastIndex and its Value bytes, both checked under the backend's lock, so
// that no write to guardKey comes between the check and the write (see
// package fenced). The value tells apart a record written anew at an index
// handed out again after loseData.
func (s *Store) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return err
	}
	defer s.b.mu.Unlock()
	g := kv.NormalizeKey(guardKey)
	if g == "" {
		return errEmptyKey
	}
	e := s.b.lookup(g)
	if guard == nil || e == nil || e.index != guard.LastIndex || !bytes.Equal(e.value, guard.Value) {
		return adapter.GuardChanged(StoreName, key)
	}
	s.b.set(s, k, value, 0, false, nil)
	return nil
}
