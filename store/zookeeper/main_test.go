package zookeeper

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"
)

// Environment variables naming the test servers (see scripts/README.md).
const (
	envSingle   = "LEADERSHIP_ZK"          // one server, host:port
	envEnsemble = "LEADERSHIP_ZK_ENSEMBLE" // three servers, comma separated
)

// hangBound is how long a call that should end by a timeout of a second or
// less may take before the test calls it hung: generous, since the machine
// running the tests may be loaded. The time taken is logged.
const hangBound = 10 * time.Second

func TestMain(m *testing.M) {
	// Nothing is ignored: Open'ed stores wait for the zk client's
	// goroutines in Close. kvtools' Close does not wait, but its client's
	// goroutines end as soon as the server acknowledges the close, well
	// before this check.
	goleak.VerifyTestMain(m)
}

// servers returns the endpoints in env, or skips the test.
func servers(t testing.TB, env string) []string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		t.Skipf("%s is not set: this test needs a ZooKeeper server (scripts/servers.sh start zookeeper zookeeper-ensemble; eval \"$(scripts/servers.sh env)\")", env)
	}
	return strings.Split(v, ",")
}

// testConfig is the Config the tests use on endpoints.
func testConfig(endpoints []string) Config {
	return Config{Endpoints: endpoints, SessionTimeout: 4 * time.Second, DialTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second}
}

// openOn opens a store on endpoints, closed at the end of the test. It is
// the one place tests make a client: one call per simulated process.
func openOn(t testing.TB, endpoints []string) store.Store {
	t.Helper()
	s, err := Open(context.Background(), testConfig(endpoints))
	if err != nil {
		t.Fatalf("Open(%v): %v", endpoints, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openSingle opens a store on the single server.
func openSingle(t testing.TB) store.Store { return openOn(t, servers(t, envSingle)) }

var keySeq atomic.Uint64

// freshKey returns a key under a prefix no other test (or test process)
// uses, ending in name.
func freshKey(name string) string {
	return fmt.Sprintf("leadership-test/zk-%d-%d-%d/%s", os.Getpid(), time.Now().UnixNano()%1e9, keySeq.Add(1), name)
}

// prefixOf returns the directory part of a key made by freshKey.
func prefixOf(key string) string { return key[:strings.LastIndexByte(key, '/')] }

// cleanup deletes the tree at dir when the test ends.
func cleanup(t testing.TB, s store.Store, dir string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.DeleteTree(ctx, dir); err != nil {
			t.Logf("cleanup %s: %v", dir, err)
		}
	})
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// noLeaks checks, once the test and all its cleanups are done, that no
// goroutine started during the test is left.
func noLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}
