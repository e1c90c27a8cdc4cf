package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

// dropSchema drops the table and the functions of table, as a server that
// lost its data would have them.
func dropSchema(t *testing.T, table string) {
	t.Helper()

	ctx := testCtx(t)
	admin := adminConn(t)

	for _, q := range []string{
		"DROP TABLE %s CASCADE",
		"DROP SEQUENCE %s_idx",
		"DROP FUNCTION %s_after(), %s_before(), %s_truncate(), %s_event(text, text, bigint, text, bigint, text, text)",
	} {
		args := []any{table, table, table, table}[:countVerbs(q)]
		_, err := admin.Exec(ctx, fmt.Sprintf(q, args...))
		require.NoError(t, err)
	}
}

// A handle whose table was dropped under it creates the schema again on
// the first calls that find it missing: one re-creation shared by them
// all, then every call succeeds, and notifications flow again.
func TestSchemaRecreated(t *testing.T) {
	table := freshTable(t)
	kv, other := openOn(t, table), openOn(t, table)
	ctx := testCtx(t)

	require.NoError(t, other.Put(ctx, "k", []byte("before"), nil))
	dropSchema(t, table)

	const n = 50

	var (
		wg   sync.WaitGroup
		errs = make([]error, n)
	)

	for i := range n {
		wg.Go(func() {
			_, errs[i] = kv.Get(ctx, fmt.Sprintf("k%d", i), nil)
		})
	}
	wg.Wait()

	for i, err := range errs {
		require.ErrorIs(t, err, store.ErrKeyNotFound, "Get %d", i)
	}

	t.Logf("%d calls found the table missing; schema re-created %d times", n, kv.repaired.Load())
	assert.Positive(t, kv.repaired.Load())
	assert.Less(t, kv.repaired.Load(), int64(n), "one re-creation per call")

	// The triggers are back: the other handle's watch sees kv's write.
	events, err := other.Watch(ctx, "k", nil)
	require.NoError(t, err)
	assert.Nil(t, storetest.NextPair(t, events).Value)
	require.NoError(t, kv.Put(ctx, "k", []byte("after"), nil))
	assert.Equal(t, []byte("after"), storetest.NextPair(t, events).Value)
}

// A write whose trigger function is gone fails with undefined_function:
// the handle puts the functions back and the write goes through.
func TestEventFunctionRecreated(t *testing.T) {
	table := freshTable(t)
	kv := openOn(t, table)
	ctx := testCtx(t)

	_, err := adminConn(t).Exec(ctx, fmt.Sprintf("DROP FUNCTION %s_event(text, text, bigint, text, bigint, text, text)", table))
	require.NoError(t, err)

	ok, _, err := kv.AtomicPut(ctx, "k", []byte("v"), nil, nil)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Positive(t, kv.repaired.Load())
}

// A server restarted without its data (scripts/servers.sh restart --wipe:
// a new cluster, the database created again) has no table: the handle
// creates the schema again by itself, and its watches go on.
func TestServerRestartedEmpty(t *testing.T) {
	testDSN(t)
	if !storetest.RestartAllowed() {
		t.Skip("LEADERSHIP_RESTART_SERVERS is not 1: this test wipes the shared postgres server")
	}

	table := freshTable(t)
	kv := openOn(t, table)
	ctx := testCtx(t)

	require.NoError(t, kv.Put(ctx, "k", []byte("before"), nil))
	events, err := kv.Watch(ctx, "k", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("before"), storetest.NextPair(t, events).Value)

	storetest.ServersScript(t, "restart", "--wipe", "postgres")
	restarted := time.Now()

	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, _, err = kv.AtomicPut(cctx, "k", []byte("after"), nil, nil)
		cancel()
		if err == nil {
			break
		}
		require.NotErrorIs(t, err, store.ErrKeyExists, "the key survived the wipe")
		if time.Now().After(deadline) {
			t.Fatalf("no write succeeds a minute after the server restarted empty: %v", err)
		}
	}
	t.Logf("writing again %v after the restart; schema re-created %d times", time.Since(restarted).Round(time.Millisecond), kv.repaired.Load())
	assert.Positive(t, kv.repaired.Load())

	// The listener is back and the trigger notifies: the watch delivers
	// the write (possibly after the deletion the resync saw).
	for {
		p := storetest.NextPair(t, events)
		t.Logf("watch: %+v", p)
		if string(p.Value) == "after" {
			return
		}
	}
}
