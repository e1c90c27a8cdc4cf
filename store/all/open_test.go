package all_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/open"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// pgxpool starts a health check goroutine when a query is
		// interrupted; it ends within 500ms, after Close.
		goleak.IgnoreAnyFunction("github.com/jackc/pgx/v5/pgxpool.(*Pool).triggerHealthCheck.func1"),
		// After a failed dial go-redis retries in the background, once a
		// second, until it sees its pool closed.
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

// TestOpenMalformedHosts checks that every network scheme refuses a
// malformed host before any dial, without showing the password.
func TestOpenMalformedHosts(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url, field string
	}{
		{"etcd://[127.0.0.1", "host"},
		{"etcd://127.0.0.1]:2379", "host"},
		{"redis://[::1:6379", "host"},
		{"consul://bad host:8500", "host"},
		{"zk://h1:2181,[h2", "host"},
		{"postgres://u:secret@[db:5432/app", "host"},
		{"postgres://u:secret@db:5432/app?sslmode=sometimes", "url"},
	} {
		kv, err := open.Store(ctx, tc.url)
		if errors.Is(err, store.ErrNotReachable) {
			t.Errorf("%s: dialled, and reported unreachable: %v", tc.url, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", tc.url, err)
		}
		var ce *open.ConfigError
		if kv != nil || !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%s: %v %v, want an error naming %s", tc.url, kv, err, tc.field)
		}
	}
}

func TestOpenPostgres(t *testing.T) {
	dsn := os.Getenv("LEADERSHIP_POSTGRES")
	if dsn == "" {
		t.Skip("LEADERSHIP_POSTGRES is not set (scripts/servers.sh starts PostgreSQL)")
	}
	ctx := context.Background()
	// dial_timeout and request_timeout are the adapter's, not pgx's (a
	// server refuses an unknown runtime parameter).
	kv, err := open.Store(ctx, dsn+"&table=open_test_kv&dial_timeout=3s&request_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if _, err := kv.Get(ctx, "missing", nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("get: %v", err)
	}
	for _, u := range []string{"postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=1", "postgres://postgres@127.0.0.1:1/x?sslmode=disable&dial_timeout=1s"} {
		if _, err := open.Store(ctx, u); !errors.Is(err, store.ErrNotReachable) {
			t.Fatalf("unreachable postgres %s: %v", u, err)
		}
	}
}

// TestOpenPostgresTimeoutsChecked checks that PostgreSQL URLs take the
// dial_timeout and request_timeout of every network scheme, checked
// before any dial.
func TestOpenPostgresTimeoutsChecked(t *testing.T) {
	for _, field := range []string{"dial_timeout", "request_timeout"} {
		var ce *open.ConfigError
		_, err := open.Store(context.Background(), "postgres://u@127.0.0.1:1/x?sslmode=disable&"+field+"=soon")
		if !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%s=soon: %v, want an error naming %s", field, err, field)
		}
	}
}

func TestOpenEtcdAndRedis(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ env, url string }{
		{"LEADERSHIP_ETCD", "etcd://%s?dial_timeout=3s"},
		{"LEADERSHIP_ETCD_CLUSTER", "etcd://%s"},
		{"LEADERSHIP_REDIS", "redis://%s/0"},
	} {
		ep := os.Getenv(tc.env)
		if ep == "" {
			t.Logf("%s is not set: skipped", tc.env)
			continue
		}
		kv, err := open.Store(ctx, fmt.Sprintf(tc.url, ep))
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if _, err := kv.Get(ctx, "open-test/missing", nil); !errors.Is(err, store.ErrKeyNotFound) {
			t.Errorf("%s: get: %v", tc.url, err)
		}
		kv.Close()
	}
	for _, url := range []string{"etcd://127.0.0.1:1?dial_timeout=500ms", "redis://127.0.0.1:1?dial_timeout=500ms"} {
		if _, err := open.Store(ctx, url); !errors.Is(err, store.ErrNotReachable) {
			t.Errorf("%s: %v, want ErrNotReachable", url, err)
		}
	}
	for _, tc := range []struct{ url, field string }{
		{"etcd://h:notaport", "port"},
		{"etcd://h:2379?dial_timeout=soon", "dial_timeout"},
		{"etcd://h:2379?tls=yes", "tls"},
		{"redis://h:6379/db1", "db"},
		{"etcd://h:2379?bogus=1", "bogus"},
	} {
		var ce *open.ConfigError
		if _, err := open.Store(ctx, tc.url); !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%s: %v, want an error naming %s", tc.url, err, tc.field)
		}
	}
}

// A parameter of the library's that the PostgreSQL Config refuses is the
// URL's mistake (open.ErrInvalidURL, a usage error for the command), named
// by the parameter, before any dial.
func TestOpenPostgresBadNamesAreTheURLs(t *testing.T) {
	for _, param := range []string{"table=bad-name", "channel=bad-name"} {
		var ce *open.ConfigError
		_, err := open.Store(context.Background(), "postgres://u@127.0.0.1:1/x?sslmode=disable&"+param)
		field, _, _ := strings.Cut(param, "=")
		if !errors.Is(err, open.ErrInvalidURL) || !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%s: %v, want open.ErrInvalidURL naming %s", param, err, field)
		}
	}
}
