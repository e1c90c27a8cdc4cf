package electiontest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// The election engine directly on a kvtools store, as valkeyrie.NewStore
// makes it, without the adapter's Wrap: docs/backends.md, "Raw kvtools
// stores", gives what works there and where it stops.

// rawTTL is the candidates' TTL in the raw runs; rawWait bounds each phase
// of a run (see Many).
const (
	rawTTL  = 2 * time.Second
	rawWait = 30 * time.Second
)

// Raw is a backend's raw kvtools store next to the adapter's own store of
// the same server, for TestRawElections and TestRawLimits.
type Raw struct {
	// N is how many elections the raw store is shown to carry on
	// one handle: under where it stops (see Limits).
	N int
	// Open opens the raw kvtools store; Own, a store of the adapter's
	// Open. Both are closed at cleanup.
	Open, Own func(t *testing.T) store.Store
	// Key returns a fresh key, whose directory is the runs' prefix.
	Key func(t *testing.T) string
	// AfterRaw, when set, runs after each raw run of Limits (Consul: the
	// kvtools client's idle connections closed).
	AfterRaw func()
}

// run runs n elections, each with a candidate and a follower, on one raw
// kvtools store (own: on one store of the adapter instead), under a fresh
// prefix deleted at the end (on Consul the delete also ends the blocking
// queries of kvtools' cancelled watches on existing keys).
func (r Raw) run(t *testing.T, n int, own bool) ManyResult {
	t.Helper()
	dir := storetest.Dir(r.Key(t))
	storetest.CleanupTree(t, r.Own(t), dir)
	kv := r.Open
	if own {
		kv = r.Own
	}
	return Many{N: n, TTL: rawTTL, Wait: rawWait}.Run(t, kv(t), dir)
}

// Elections runs r.N elections on one raw kvtools store: every
// candidate is elected, every follower names it and then sees it stop,
// nothing is left running.
func (r Raw) Elections(t *testing.T) {
	storetest.NoLeaks(t)
	res := r.run(t, r.N, false)
	t.Log(res)
	if !res.OK() {
		t.Fatalf("raw kvtools store: %v", res)
	}
}

// Limits measures where the raw store stops, and the same load on the
// adapter's store for comparison, for each of LimitSizes(t, sizes...) (on
// demand: LEADERSHIP_RAW_LIMITS=1, sizes in LEADERSHIP_RAW_LIMITS_N).
func (r Raw) Limits(t *testing.T, sizes ...int) {
	for _, n := range LimitSizes(t, sizes...) {
		t.Run(fmt.Sprintf("raw/%d", n), func(t *testing.T) {
			t.Cleanup(func() { // last
				t.Logf("kvtools goroutines left 20s after Close: %d", LeftRunning("github.com/kvtools/", 20*time.Second))
				if r.AfterRaw != nil {
					r.AfterRaw()
				}
			})
			t.Log(r.run(t, n, false))
		})
		t.Run(fmt.Sprintf("own/%d", n), func(t *testing.T) { t.Log(r.run(t, n, true)) })
	}
}

// OpenRaw opens the kvtools store registered with valkeyrie as name on
// endpoints, with options, as valkeyrie.NewStore does; it is closed at
// cleanup (its Close errors are kvtools', not under test).
func OpenRaw(t testing.TB, name string, endpoints []string, options valkeyrie.Config) store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := valkeyrie.NewStore(ctx, name, endpoints, options)
	if err != nil {
		t.Fatalf("valkeyrie.NewStore(%q): %v", name, err)
	}
	t.Cleanup(func() { _ = kv.Close() })
	return kv
}

// RawConformance runs leadershiptest's conformance suite on the raw
// kvtools store named name (valkeyrie.NewStore(ctx, name, endpoints,
// options), as docker/leadership's users and the package doc open a
// store), through the suite's forwarders, with the server restarts of
// Network(backend, server, ...). The engine must be correct and timely on
// it without the adapter's fixes. ManyElections is lowered to many for
// the run: a raw store's watches cost goroutines that -race limits, or
// connections (see Limits). server is "" for a raw client that cannot
// live through its server's restart without data (kvtools' ZooKeeper
// client), so that the restarts are skipped.
func RawConformance(t *testing.T, backend, server, name string, endpoints []string, options valkeyrie.Config, many int) {
	t.Helper()
	was := leadershiptest.ManyElections
	leadershiptest.ManyElections = min(was, many)
	t.Cleanup(func() { leadershiptest.ManyElections = was })
	leadershiptest.Run(t, Network(backend, server, endpoints, func(ctx context.Context, eps []string) (store.Store, error) {
		return valkeyrie.NewStore(ctx, name, eps, options)
	}))
}
