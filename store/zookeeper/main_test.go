package zookeeper

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// Environment variables naming the test servers (see scripts/README.md).
const (
	envSingle   = "LEADERSHIP_ZK"          // one server, host:port
	envEnsemble = "LEADERSHIP_ZK_ENSEMBLE" // three servers, comma separated
)

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
	return storetest.Endpoints(t, env, "a ZooKeeper server (scripts/servers.sh start zookeeper zookeeper-ensemble)")
}

// testConfig is the Config the tests use on endpoints.
func testConfig(endpoints []string) Config {
	return Config{Endpoints: endpoints, SessionTimeout: 4 * time.Second, DialTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second}
}

// openEndpoints opens a client with the defaults, except that the open may
// take electiontest.OpenBudget (the conformance suite's opener).
var openEndpoints = electiontest.Opener(Open, func(endpoints []string) Config {
	return Config{Endpoints: endpoints, DialTimeout: electiontest.OpenBudget}
})

// openOn opens a store on endpoints, closed at the end of the test. It is
// the one place tests make a client: one call per simulated process.
func openOn(t testing.TB, endpoints []string) store.Store {
	t.Helper()
	return storetest.OpenStore(t, fmt.Sprint(endpoints), func(ctx context.Context) (store.Store, error) { return Open(ctx, testConfig(endpoints)) })
}

// openSingle opens a store on the single server.
func openSingle(t testing.TB) store.Store { return openOn(t, servers(t, envSingle)) }

// freshKey returns a key under a prefix no other test (or test process)
// uses, ending in name.
func freshKey(name string) string { return storetest.FreshKey("zk", name) }
