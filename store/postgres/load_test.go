package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/kvtools/valkeyrie/store"
)

// openPool opens a handle on a fresh table with a pool of maxConns
// connections, closed at cleanup.
func openPool(t *testing.T, maxConns int32) *Store {
	t.Helper()
	kv, err := open(context.Background(), testDSN(t), &Config{Table: freshTable(t), MaxConns: maxConns})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kv.Close() })

	return kv
}

// A call that gives up while its statement runs returns at once, and the
// statement finishes in the background: the connection stays in the pool
// (pgx would close it if the statement were interrupted).
func TestTimedOutCallKeepsConnection(t *testing.T) {
	kv := openPool(t, 1)

	ctx := testCtx(t)
	_, err := kv.Get(ctx, "warm", nil) // the pool's one connection
	require.ErrorIs(t, err, store.ErrKeyNotFound)
	before := kv.pool.Stat().NewConnsCount()

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()

	start := time.Now()
	err = kv.exec(cctx, func(ctx context.Context, conn *pgxpool.Conn) error {
		_, err := conn.Exec(ctx, "SELECT pg_sleep(0.5)")
		return err
	})
	t.Logf("the call returned after %v", time.Since(start))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The next call waits for the connection and gets the same one.
	_, err = kv.Get(ctx, "k", nil)
	require.ErrorIs(t, err, store.ErrKeyNotFound)
	assert.Equal(t, before, kv.pool.Stat().NewConnsCount(), "a connection was opened again")
}

// Concurrent calls go out in batches, with the outcome of calls run one
// after the other: of many compare-and-swaps on one key from the same
// pair exactly one wins, those on distinct keys all win, reads see the
// last writes.
func TestBatchedCalls(t *testing.T) {
	kv := openPool(t, 2)

	ctx := testCtx(t)

	const n = 200

	require.NoError(t, kv.Put(ctx, "shared", []byte("0"), nil))
	shared, err := kv.Get(ctx, "shared", nil)
	require.NoError(t, err)

	pairs := make([]*store.KVPair, n)
	for i := range n {
		_, pairs[i], err = kv.AtomicPut(ctx, fmt.Sprintf("k%d", i), []byte("created"), nil, nil)
		require.NoError(t, err)
	}

	acquired := kv.pool.Stat().AcquireCount()

	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		own     = make([]error, n)
		contest = make([]error, n)
		reads   = make([]*store.KVPair, n)
		readErr = make([]error, n)
	)

	for i := range n {
		wg.Go(func() {
			<-start
			_, _, own[i] = kv.AtomicPut(ctx, fmt.Sprintf("k%d", i), []byte("swapped"), pairs[i], nil)
		})
		wg.Go(func() {
			<-start
			_, _, contest[i] = kv.AtomicPut(ctx, "shared", fmt.Appendf(nil, "%d", i), shared, nil)
		})
		wg.Go(func() {
			<-start
			reads[i], readErr[i] = kv.Get(ctx, fmt.Sprintf("k%d", i), nil)
		})
	}
	close(start)
	wg.Wait()

	statements := kv.pool.Stat().AcquireCount() - acquired
	t.Logf("%d calls in %d statements", 3*n, statements)
	assert.Less(t, statements, int64(3*n), "no call was batched")

	wins := 0
	for i := range n {
		require.NoError(t, own[i], "compare-and-swap of k%d", i)
		require.NoError(t, readErr[i], "Get k%d", i)
		assert.Contains(t, []string{"created", "swapped"}, string(reads[i].Value))

		switch {
		case contest[i] == nil:
			wins++
		case !errors.Is(contest[i], store.ErrKeyModified):
			t.Errorf("compare-and-swap %d on the shared key: %v", i, contest[i])
		}
	}
	assert.Equal(t, 1, wins, "compare-and-swaps from the same pair that won")

	for i := range n {
		p, err := kv.Get(ctx, fmt.Sprintf("k%d", i), nil)
		require.NoError(t, err)
		assert.Equal(t, "swapped", string(p.Value))
		assert.Greater(t, p.LastIndex, pairs[i].LastIndex)
	}
}
