package etcd

import (
	"context"
	"fmt"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// Environment variables naming the test servers (see scripts/README.md).
const (
	envSingle  = "LEADERSHIP_ETCD"         // one member, host:port
	envCluster = "LEADERSHIP_ETCD_CLUSTER" // members, comma-separated
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// kvtools' NewLock starts a goroutine that waits for
		// LockOptions.RenewLock to close (a private channel nobody ever
		// closes when RenewLock is nil) and nothing else, so it outlives
		// Close for ever. Only valkeyrie's lock tests (suite_test.go)
		// create locks; the election engine never does.
		goleak.IgnoreTopFunction("github.com/kvtools/etcdv3.(*Store).NewLock.func1"),
	)
}

// endpointsFrom returns the endpoints in the environment variable env, or
// skips the test.
func endpointsFrom(t *testing.T, env string) []string {
	t.Helper()
	return storetest.Endpoints(t, env, "a running etcd (scripts/servers.sh start etcd etcd-cluster)")
}

// serverConfig is the Config of the single-member test server.
func serverConfig(t *testing.T) Config {
	t.Helper()
	return Config{Endpoints: endpointsFrom(t, envSingle)}
}

// openEndpoints opens a client with the defaults, except that the open may
// take electiontest.OpenBudget (the conformance suite's opener).
var openEndpoints = electiontest.Opener(Open, func(endpoints []string) Config {
	return Config{Endpoints: endpoints, DialTimeout: electiontest.OpenBudget}
})

// openClient opens one client, as a separate process would, and closes it
// at cleanup.
func openClient(t *testing.T, cfg Config) store.Store {
	t.Helper()
	return storetest.OpenStore(t, fmt.Sprint(cfg.Endpoints), func(ctx context.Context) (store.Store, error) { return Open(ctx, cfg) })
}

// uniqueKey returns a key no other test, run or process uses.
func uniqueKey(t *testing.T) string { return storetest.TestKey(t, "etcd") }
