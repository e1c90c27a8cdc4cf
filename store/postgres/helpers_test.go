package postgres

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/check"
)

// dsnEnv names the environment variable holding the DSN of the server the
// tests run against, e.g.
// postgres://postgres@127.0.0.1:5432/leadership?sslmode=disable.
const dsnEnv = "LEADERSHIP_POSTGRES"

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// When a query is interrupted by its context, pgxpool discards the
		// connection and starts a goroutine that sleeps 500ms before asking
		// for a health check; it may outlive Pool.Close by that much.
		goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).triggerHealthCheck.func1"),
	)
}

// testDSN returns the DSN of the test server, or skips the test.
func testDSN(t *testing.T) string {
	t.Helper()

	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("%s is not set: these tests need a PostgreSQL server (set %s to its DSN, e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable)", dsnEnv, dsnEnv)
	}

	return dsn
}

var tableSeq atomic.Uint64

// freshTable returns a table name used by no other test (nor by another
// test process) and drops its objects at cleanup.
func freshTable(t *testing.T) string {
	t.Helper()

	dsn := testDSN(t)
	name := fmt.Sprintf("lt_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, tableSeq.Add(1))

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()

		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("cleanup: %v", err)

			return
		}
		defer conn.Close(ctx)

		for _, q := range []string{
			"DROP TABLE IF EXISTS %s CASCADE",
			"DROP SEQUENCE IF EXISTS %s_idx",
			"DROP FUNCTION IF EXISTS %s_after(), %s_before(), %s_truncate(), %s_event(text, text, bigint, text, bigint, text, text)",
		} {
			args := []any{name, name, name, name}[:countVerbs(q)]
			if _, err := conn.Exec(ctx, fmt.Sprintf(q, args...)); err != nil {
				t.Logf("cleanup: %v", err)
			}
		}
	})

	return name
}

func countVerbs(q string) int {
	n := 0
	for i := 0; i+1 < len(q); i++ {
		if q[i] == '%' && q[i+1] == 's' {
			n++
		}
	}

	return n
}

// openOn opens a handle on table through valkeyrie and closes it at cleanup.
func openOn(t *testing.T, table string) *Store {
	t.Helper()

	kv, err := valkeyrie.NewStore(context.Background(), StoreName, []string{testDSN(t)}, &Config{Table: table})
	require.NoError(t, err)
	t.Cleanup(func() { _ = kv.Close() })

	s, ok := kv.(*Store)
	require.True(t, ok, "NewStore returned %T", kv)

	return s
}

// adminConn returns a plain connection to the test server.
func adminConn(t *testing.T) *pgx.Conn {
	t.Helper()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	conn, err := pgx.Connect(ctx, testDSN(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })

	return conn
}

// openTwo opens two handles on a fresh table, closed at cleanup: one to
// watch or lock with, the other to write beside it.
func openTwo(t *testing.T) (*Store, *Store) {
	t.Helper()
	table := freshTable(t)

	return openOn(t, table), openOn(t, table)
}

func testCtx(t *testing.T) context.Context {
	t.Helper()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)

	return ctx
}

// noPair checks that nothing arrives on ch for d.
func noPair(t *testing.T, ch <-chan *store.KVPair, d time.Duration) {
	t.Helper()

	select {
	case p := <-ch:
		require.FailNow(t, "unexpected watch event", "%+v", p)
	case <-time.After(d):
	}
}

// closedWithin reports whether ch closes within d.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}

	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// require and assert are the checks of package check (on the standard
// library), under the names these tests use: require stops the test at a
// failed check, assert goes on.
var (
	require = check.Must
	assert  = check.Expect
)
