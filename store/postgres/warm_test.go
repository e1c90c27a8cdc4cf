package postgres

import (
	"testing"
)

// Open runs the table's triggers on its warm connections (the index
// sequence moves: the warm-up's writes took indexes) inside transactions
// it rolls back: no row is left, and a watcher of the whole table sees
// the next real write as the first change after the warm-up.
func TestWarmUpLeavesNoTrace(t *testing.T) {
	ctx := testCtx(t)
	table := freshTable(t)
	watcher := openOn(t, table)
	tree, err := watcher.WatchTree(ctx, "", nil)
	require.NoError(t, err)
	require.Empty(t, <-tree, "a fresh table's first list")

	admin := adminConn(t)
	seq := func() int64 {
		var v int64
		require.NoError(t, admin.QueryRow(ctx, "SELECT last_value FROM "+table+"_idx").Scan(&v))
		return v
	}
	before := seq()
	writer := openOn(t, table)
	require.GreaterOrEqual(t, seq()-before, int64(2*warmConns), "indexes taken by the warm-up's create and compare-and-swap on each connection")

	require.NoError(t, writer.Put(ctx, "sentinel", []byte("v"), nil))
	pairs := <-tree
	require.Len(t, pairs, 1, "the first change after the warm-up: %+v", pairs)
	require.Equal(t, "sentinel", pairs[0].Key)
	all, err := writer.List(ctx, "", nil)
	require.NoError(t, err)
	require.Len(t, all, 1)
}
