package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// Fenced writes on a handle: see storetest.Fenced.
func TestFencedPut(t *testing.T) {
	storetest.Fenced(t, openOn(t, freshTable(t)), "fenced")
}

// A fenced write sent while another transaction is rewriting the guard row
// waits for it, and is refused once it commits: the check is not made on
// the version the write started with.
func TestFencedPutWaitsForGuardWrite(t *testing.T) {
	kv := openOn(t, freshTable(t))
	ctx := testCtx(t)
	ok, guard, err := kv.AtomicPut(ctx, "fence/guard", []byte("v1"), nil, nil)
	require.NoError(t, err)
	require.True(t, ok)

	admin := adminConn(t)
	tx, err := admin.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	_, err = tx.Exec(ctx, "UPDATE "+kv.Table()+" SET value = 'v2', idx = idx + 1000000 WHERE key = 'fence/guard'")
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() { done <- kv.FencedPut(ctx, "fence/data", []byte("late"), "fence/guard", guard) }()
	select {
	case err := <-done:
		t.Fatalf("FencedPut returned while the guard row was being written: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, tx.Commit(ctx))
	if err := <-done; !errors.Is(err, fenced.ErrGuardChanged) {
		t.Fatalf("FencedPut = %v, want fenced.ErrGuardChanged", err)
	}
	_, err = kv.Get(ctx, "fence/data", nil)
	require.ErrorIs(t, err, store.ErrKeyNotFound)
}

// A cancelled context ends FencedPut at once with its error.
func TestFencedPutCancelled(t *testing.T) {
	kv := openOn(t, freshTable(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := kv.FencedPut(ctx, "fence/data", nil, "fence/guard", &store.KVPair{LastIndex: 1})
	require.ErrorIs(t, err, context.Canceled)
}
