package redis

import (
	"context"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

// envServer names the environment variable holding the test server's
// address, host:port (see scripts/README.md).
const envServer = "LEADERSHIP_REDIS"

func TestMain(m *testing.M) {
	// No goroutine of kvtools or go-redis outlives Close, but one: after a
	// failed dial (TestOpenUnreachable) go-redis retries in the background
	// once a second until it sees its pool closed, up to a second after
	// Close; a short run (-short) ends within that second.
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}

// serverConfig is the Config of the test server, or skips the test.
func serverConfig(t *testing.T) Config {
	t.Helper()
	v := storetest.Env(t, envServer, "a running Redis with keyspace notifications (scripts/servers.sh start redis)")
	return Config{Endpoints: []string{v}}
}

// openClient opens one client, as a separate process would, and closes it
// at cleanup.
func openClient(t *testing.T, cfg Config) store.Store {
	t.Helper()
	return storetest.OpenStore(t, cfg.Endpoints[0], func(ctx context.Context) (store.Store, error) { return Open(ctx, cfg) })
}

// uniqueKey returns a key no other test, run or process uses.
func uniqueKey(t *testing.T) string { return storetest.TestKey(t, "redis") }

// openTwo opens two stores on the test server, closed at cleanup: one to
// watch with, the other to write beside it.
func openTwo(t *testing.T) (store.Store, store.Store) {
	t.Helper()
	cfg := serverConfig(t)
	return openClient(t, cfg), openClient(t, cfg)
}

// leakTest starts a test that ends with goleak.VerifyNone(t, leaks), to
// check that the stores it opens leave nothing running: cfg is the test
// server's Config, other a store to write with (its goroutines, which end
// at cleanup, are in leaks), and key a fresh key, deleted at cleanup.
func leakTest(t *testing.T) (cfg Config, other store.Store, leaks goleak.Option, key string) {
	t.Helper()
	cfg = serverConfig(t)
	other = openClient(t, cfg)
	leaks = goleak.IgnoreCurrent()
	key = uniqueKey(t)
	t.Cleanup(func() { _ = other.Delete(context.Background(), key) })
	return cfg, other, leaks, key
}
