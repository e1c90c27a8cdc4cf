package postgres

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/guard"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestNewUnreachable(t *testing.T) {
	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	start := time.Now()
	_, err = valkeyrie.NewStore(context.Background(), StoreName,
		[]string{"postgres://nobody@" + addr + "/db?sslmode=disable"}, &Config{DialTimeout: time.Second})
	require.Error(t, err)
	require.ErrorIs(t, err, store.ErrNotReachable)

	var ue *unreachableError
	require.ErrorAs(t, err, &ue)
	t.Logf("refused: failed after %v", time.Since(start))
	assert.Less(t, time.Since(start), storetest.Patience, "hung")

	// A server that accepts but never answers: bounded by DialTimeout.
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()

	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	}()

	start = time.Now()
	_, err = Open(context.Background(), Config{DSN: lstore.Secret("postgres://nobody@" + ln.Addr().String() + "/db?sslmode=disable"), DialTimeout: 300 * time.Millisecond})
	require.ErrorIs(t, err, store.ErrNotReachable)
	t.Logf("hung: failed after %v", time.Since(start))
	assert.Less(t, time.Since(start), storetest.Patience, "hung")
}

func TestBadConfig(t *testing.T) {
	ctx := context.Background()

	for _, opt := range []any{"table", Config{}, &struct{}{}, 42} {
		_, err := valkeyrie.NewStore(ctx, StoreName, []string{"postgres://x@127.0.0.1:1/db"}, opt)

		var ice *store.InvalidConfigurationError
		require.ErrorAs(t, err, &ice, "%T", opt)
		assert.Equal(t, StoreName, ice.Store)
	}

	_, err := valkeyrie.NewStore(ctx, StoreName, nil, nil)
	require.ErrorIs(t, err, errNoEndpoint)

	_, err = Open(ctx, Config{})
	require.ErrorIs(t, err, errNoEndpoint)

	for _, cfg := range []Config{
		{Table: "bad-name"},
		{Table: "x; DROP TABLE y"},
		{Table: "t123456789012345678901234567890123456789012345678901234567890"},
		{Channel: "no spaces"},
		{Schema: "1abc"},
		{DialTimeout: -time.Second},
		{MaxConns: -1},
	} {
		cfg.DSN = "postgres://x@127.0.0.1:1/db"
		_, err := Open(ctx, cfg)
		require.ErrorIs(t, err, errInvalidConfig, "%+v", cfg)
	}

	_, err = Open(ctx, Config{DSN: "postgres://x@127.0.0.1:1/db?connect_timeout=abc"})
	require.ErrorIs(t, err, errInvalidConfig)
}

func TestChannelMismatch(t *testing.T) {
	table := freshTable(t)
	openOn(t, table)

	_, err := Open(context.Background(), Config{DSN: lstore.Secret(testDSN(t)), Table: table, Channel: "elsewhere"})
	require.ErrorIs(t, err, errChannelMismatch)
}

func TestConcurrentOpen(t *testing.T) {
	table := freshTable(t)
	dsn := testDSN(t)

	const n = 8

	stores := make([]*Store, n)
	errs := make([]error, n)

	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = open(context.Background(), dsn, &Config{Table: table})
		}()
	}
	wg.Wait()

	for i := range n {
		require.NoError(t, errs[i])
		require.NoError(t, stores[i].Close())
	}
}

func TestIndexIncreasing(t *testing.T) {
	kv, other := openTwo(t)
	ctx := testCtx(t)

	var last uint64

	next := func(p *store.KVPair) {
		t.Helper()
		require.Greater(t, p.LastIndex, last)
		last = p.LastIndex
	}

	for range 3 {
		ok, pair, err := kv.AtomicPut(ctx, "k", []byte("v"), nil, nil)
		require.NoError(t, err)
		require.True(t, ok)
		next(pair)

		got, err := other.Get(ctx, "/k/", nil)
		require.NoError(t, err)
		assert.Equal(t, pair, got)

		ok, pair, err = other.AtomicPut(ctx, "k", []byte("w"), got, nil)
		require.NoError(t, err)
		require.True(t, ok)
		next(pair)

		_, _, err = kv.AtomicPut(ctx, "k", []byte("x"), got, nil)
		require.Equal(t, store.ErrKeyModified, err)

		_, err = kv.AtomicDelete(ctx, "k", got)
		require.Equal(t, store.ErrKeyModified, err)

		ok, err = kv.AtomicDelete(ctx, "k", pair)
		require.NoError(t, err)
		require.True(t, ok)

		_, _, err = kv.AtomicPut(ctx, "k", []byte("x"), pair, nil)
		require.ErrorIs(t, err, store.ErrKeyNotFound)

		_, err = kv.AtomicDelete(ctx, "k", nil)
		require.ErrorIs(t, err, store.ErrPreviousNotSpecified)
	}

	// Concurrent writers never see an index go backwards.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				assert.NoError(t, kv.Put(ctx, "c", []byte("x"), nil))
			}
		}()
	}

	prev := uint64(0)
	deadline := time.Now().Add(storetest.Patience)
	for time.Now().Before(deadline) {
		p, err := other.Get(ctx, "c", nil)
		if err == nil {
			require.GreaterOrEqual(t, p.LastIndex, prev)
			prev = p.LastIndex
		}

		if guard.AwaitGroup(&wg, time.Millisecond) {
			break
		}
	}
}

func TestListAndDeleteTree(t *testing.T) {
	table := freshTable(t)
	kv := openOn(t, table)
	ctx := testCtx(t)

	for _, k := range []string{"a", "a/b", "a/b/c", "a/d", "a.b", "a0", "ab", "a%/x", "a_/y"} {
		require.NoError(t, kv.Put(ctx, k, []byte(k), nil))
	}

	pairs, err := kv.List(ctx, "/a/", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a/b", "a/b/c", "a/d"}, storetest.Keys(pairs))

	pairs, err = kv.List(ctx, "a%", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a%/x"}, storetest.Keys(pairs))

	pairs, err = kv.List(ctx, "", nil)
	require.NoError(t, err)
	assert.Len(t, pairs, 9)

	_, err = kv.List(ctx, "nothing", nil)
	require.ErrorIs(t, err, store.ErrKeyNotFound)

	require.NoError(t, kv.DeleteTree(ctx, "a"))

	pairs, err = kv.List(ctx, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a%/x", "a.b", "a0", "a_/y", "ab"}, storetest.Keys(pairs))

	require.NoError(t, kv.DeleteTree(ctx, "/"))
	_, err = kv.List(ctx, "", nil)
	require.ErrorIs(t, err, store.ErrKeyNotFound)

	_, err = kv.Get(ctx, "/", nil)
	require.ErrorIs(t, err, errEmptyKey)
}

func TestContextHonoured(t *testing.T) {
	table := freshTable(t)
	kv := openOn(t, table)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	require.ErrorIs(t, kv.Put(ctx, "k", nil, nil), context.Canceled)
	_, err := kv.Get(ctx, "k", nil)
	require.ErrorIs(t, err, context.Canceled)
	_, err = kv.Watch(ctx, "k", nil)
	require.ErrorIs(t, err, context.Canceled)

	// A statement interrupted by its deadline.
	admin := adminConn(t)
	_, err = admin.Exec(context.Background(), "BEGIN")
	require.NoError(t, err)
	_, err = admin.Exec(context.Background(), "LOCK TABLE "+kv.Table())
	require.NoError(t, err)

	dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer dcancel()

	start := time.Now()
	require.ErrorIs(t, kv.Put(dctx, "k", nil, nil), context.DeadlineExceeded)
	t.Logf("interrupted after %v", time.Since(start))
	assert.Less(t, time.Since(start), storetest.Patience, "hung")

	_, err = admin.Exec(context.Background(), "ROLLBACK")
	require.NoError(t, err)

	require.NoError(t, kv.Put(context.Background(), "k", nil, nil))
	p, err := kv.Get(context.Background(), "k", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte{}, p.Value)
}

func TestChannelSharedByTables(t *testing.T) {
	first, second := freshTable(t), freshTable(t)
	openOn(t, first)

	_, err := Open(context.Background(), Config{DSN: lstore.Secret(testDSN(t)), Table: second, Channel: first + "_events"})
	require.ErrorIs(t, err, errChannelMismatch)

	openOn(t, second) // its own default channel is fine
}

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
