package consul

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	kvconsul "github.com/kvtools/consul"
	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

// runSuite runs valkeyrie's testsuite on kv under a fresh prefix; cleaner
// deletes the prefix afterwards.
func runSuite(t *testing.T, kv, other, cleaner store.Store) {
	dir := storetest.Dir(freshKey("suite"))
	storetest.CleanupTree(t, cleaner, dir)
	// Not RunTestWatch: its testWatch writes the same value three times and
	// expects three events, but Consul (1.20 at least) ignores a write that
	// changes nothing: the index does not move and no watch fires. TestWatch
	// and TestWatchTree cover the same ground.
	// Locks and TTLs need sessions of 1s: the test agent allows them
	// (session_ttl_min lowered); stock agents refuse TTLs under 10s.
	storetest.RunSuite(t, kv, storetest.Suite{Prefix: dir + "/", Atomic: true, Lock: true, ListLock: true, TTL: other})
}

func TestValkeyrieSuite(t *testing.T) {
	runSuite(t, openAgent(t), openAgent(t), openAgent(t))
}

// kvtoolsStore opens kvtools/consul's store as valkeyrie.NewStore does.
func kvtoolsStore(t testing.TB, endpoint string) store.Store {
	t.Helper()
	s, err := valkeyrie.NewStore(context.Background(), kvconsul.StoreName, []string{endpoint}, nil)
	if err != nil {
		t.Fatalf("valkeyrie.NewStore(%q): %v", kvconsul.StoreName, err)
	}
	t.Cleanup(func() {
		_ = s.Close()
		// kvtools uses http.DefaultClient: close the connections it left.
		http.DefaultClient.CloseIdleConnections()
	})
	return s
}

// The testsuite on Wrap(kvtools store). Failures here are kvtools defects
// that cannot be fixed from outside (see Wrap); run on demand with
// LEADERSHIP_KVTOOLS_SUITE=1.
func TestValkeyrieSuiteWrapped(t *testing.T) {
	addr := agent(t)
	if os.Getenv("LEADERSHIP_KVTOOLS_SUITE") == "" {
		t.Skip("LEADERSHIP_KVTOOLS_SUITE is not set: the testsuite on Wrap(kvtools/consul) documents kvtools defects")
	}
	runSuite(t, Wrap(kvtoolsStore(t, addr), 5*time.Second), Wrap(kvtoolsStore(t, addr), 5*time.Second), openAgent(t))
}
