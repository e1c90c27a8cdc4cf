package zookeeper

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"
	kvzk "github.com/kvtools/zookeeper"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// The election engine directly on kvtools/zookeeper's store, as
// valkeyrie.NewStore("zookeeper") makes it, without Wrap: docs/backends.md,
// "Raw kvtools stores", gives what works there and where it stops.

// rawElections is how many elections the raw store is shown to carry on
// one handle: well under where it stops (see TestRawLimits).
const rawElections = 50

// rawTTL is the candidates' TTL in these tests; rawWait bounds each phase
// of a run (see electiontest.Many).
const (
	rawTTL  = 2 * time.Second
	rawWait = 30 * time.Second
)

// rawStore opens kvtools/zookeeper's store as valkeyrie.NewStore does
// (its session timeout is ConnectionTimeout), closed at cleanup.
func rawStore(t *testing.T, endpoints []string) store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := valkeyrie.NewStore(ctx, kvzk.StoreName, endpoints, &kvzk.Config{ConnectionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatalf("valkeyrie.NewStore(%q): %v", kvzk.StoreName, err)
	}
	t.Cleanup(func() { _ = kv.Close() })
	return kv
}

// runRaw runs n elections, each with a candidate and a follower, on one
// raw kvtools store (own: on one store of this package's Open instead),
// under a fresh prefix deleted at the end.
func runRaw(t *testing.T, n int, own bool) electiontest.ManyResult {
	t.Helper()
	eps := servers(t, envSingle)
	dir := storetest.Dir(freshKey("raw"))
	storetest.CleanupTree(t, openOn(t, eps), dir)
	var kv store.Store
	if own {
		kv = openOn(t, eps)
	} else {
		kv = rawStore(t, eps)
	}
	return electiontest.Many{N: n, TTL: rawTTL, Wait: rawWait}.Run(t, kv, dir)
}

// rawElections elections on one raw kvtools store: every candidate is
// elected, every follower names it and then sees it stop, nothing is left
// running.
func TestRawElections(t *testing.T) {
	servers(t, envSingle) // skips without a server
	storetest.NoLeaks(t)
	r := runRaw(t, rawElections, false)
	t.Log(r)
	if !r.OK() {
		t.Fatalf("raw kvtools store: %v", r)
	}
}

// TestRawLimits measures where the raw store stops, and the same load on
// this package's store for comparison (on demand: LEADERSHIP_RAW_LIMITS=1,
// sizes in LEADERSHIP_RAW_LIMITS_N; without -race, whose limit of 8128
// goroutines a raw store reaches at about 300 elections).
func TestRawLimits(t *testing.T) {
	servers(t, envSingle)
	for _, n := range electiontest.LimitSizes(t, 100, 300, 1000, 1500, 2000) {
		t.Run(fmt.Sprintf("raw/%d", n), func(t *testing.T) {
			t.Cleanup(func() { // last
				t.Logf("kvtools goroutines left 20s after Close: %d", electiontest.LeftRunning("github.com/kvtools/", 20*time.Second))
			})
			t.Log(runRaw(t, n, false))
		})
		t.Run(fmt.Sprintf("own/%d", n), func(t *testing.T) { t.Log(runRaw(t, n, true)) })
	}
}
