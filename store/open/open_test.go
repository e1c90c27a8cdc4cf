package open

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// pgxpool starts a health check goroutine when a query is
		// interrupted; it ends within 500ms, after Close.
		goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).triggerHealthCheck.func1"))
}

func TestOpenMemory(t *testing.T) {
	ctx := context.Background()
	a, err := Store(ctx, "memory://open-test")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Store(ctx, "memory:///open-test")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := a.Put(ctx, "k", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	if p, err := b.Get(ctx, "k", nil); err != nil || string(p.Value) != "v" {
		t.Fatalf("handles of one name do not share: %v %v", p, err)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url, field string
	}{
		{"memory://", "host"},
		{"memory://x?tls=true", "tls"},
		{"nosuch://h:1", "scheme"},
	} {
		kv, err := Store(ctx, tc.url)
		var ce *ConfigError
		if kv != nil || !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%s: %v %v, want an error naming %s", tc.url, kv, err, tc.field)
		}
	}
	if _, err := Store(ctx, "nosuch://h:1"); !errors.Is(err, ErrUnknownScheme) {
		t.Errorf("unknown scheme: %v", err)
	}
	t.Setenv("LEADERSHIP_STORE_TEST", "")
	if _, err := FromEnv(ctx, "LEADERSHIP_STORE_TEST"); !errors.Is(err, ErrNoURL) {
		t.Errorf("empty env: %v", err)
	}
	t.Setenv("LEADERSHIP_STORE_TEST", "memory://from-env")
	kv, err := FromEnv(ctx, "LEADERSHIP_STORE_TEST")
	if err != nil {
		t.Fatal(err)
	}
	kv.Close()
}

func TestOpenPostgres(t *testing.T) {
	dsn := os.Getenv("LEADERSHIP_POSTGRES")
	if dsn == "" {
		t.Skip("LEADERSHIP_POSTGRES is not set (scripts/servers.sh starts PostgreSQL)")
	}
	ctx := context.Background()
	kv, err := Store(ctx, dsn+"&table=open_test_kv")
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if _, err := kv.Get(ctx, "missing", nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("get: %v", err)
	}
	if _, err := Store(ctx, "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1"); !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("unreachable postgres: %v", err)
	}
}
