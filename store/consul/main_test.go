package consul

import (
	"context"
	"net/http"
	"testing"
	"time"

	kvconsul "github.com/kvtools/consul"
	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// envConsul names the variable holding the test agent's HTTP address
// (see scripts/README.md).
const envConsul = "LEADERSHIP_CONSUL"

func TestMain(m *testing.M) {
	// Nothing is ignored: Open'ed stores wait for their goroutines and close
	// their connections in Close. kvtools' watch ignores its context until
	// its blocking query returns (a change, or its 15s wait): the tests end
	// most by a write, and TestMain waits out the rest (a loaded machine
	// may not have run the loop's last turn before the tests end), then
	// closes http.DefaultClient's idle connections. Only the on-demand
	// TestValkeyrieSuiteWrapped leaks, by kvtools' lock renewals, which
	// never stop.
	goleak.VerifyTestMain(storetest.AfterLingering(m, "github.com/kvtools/consul.(*Store).Watch",
		kvtoolsWatchWait+10*time.Second, http.DefaultClient.CloseIdleConnections))
}

// kvtoolsWatchWait is the longest a kvtools watch's blocking query waits.
const kvtoolsWatchWait = kvconsul.DefaultWatchWaitTime

func agent(t testing.TB) string {
	t.Helper()
	return storetest.Env(t, envConsul, "a Consul agent (scripts/servers.sh start consul)")
}

// testConfig is the Config the tests use on endpoint.
func testConfig(endpoint string) Config {
	return Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second}
}

// openOn opens a store on endpoint, closed at the end of the test. It is
// the one place tests make a client: one call per simulated process.
func openOn(t testing.TB, endpoint string) store.Store {
	t.Helper()
	return storetest.OpenStore(t, endpoint, func(ctx context.Context) (store.Store, error) { return Open(ctx, testConfig(endpoint)) })
}

// openAgent opens a store on the test agent.
func openAgent(t testing.TB) store.Store { return openOn(t, agent(t)) }

// freshKey returns a key under a prefix no other test (or test process)
// uses, ending in name.
func freshKey(name string) string { return storetest.FreshKey("consul", name) }

// kvtoolsStore opens kvtools/consul's store as valkeyrie.NewStore does,
// closed at cleanup. kvtools uses http.DefaultClient: the connections it
// left are closed after the store.
func kvtoolsStore(t testing.TB, endpoint string) store.Store {
	t.Helper()
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	return electiontest.OpenRaw(t, kvconsul.StoreName, []string{endpoint}, nil)
}
