package consul

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// The election engine directly on kvtools/consul's store, as
// valkeyrie.NewStore("consul") makes it, without Wrap: docs/backends.md,
// "Raw kvtools stores", gives what works there and where it stops.

// rawElections is how many elections the raw store is shown to carry on
// one handle: under where it stops (see TestRawLimits). Each election
// here holds two of the agent's 200 connections per client address (one
// per watch: the candidate's and the follower's), a budget shared with
// every other test process on this machine.
const rawElections = 30

// rawTTL is the candidates' TTL in these tests; rawWait bounds each phase
// of a run (see electiontest.Many).
const (
	rawTTL  = 2 * time.Second
	rawWait = 30 * time.Second
)

// runRaw runs n elections, each with a candidate and a follower, on one
// raw kvtools store (own: on one store of this package's Open instead),
// under a fresh prefix deleted at the end (the delete also ends the
// blocking queries of kvtools' cancelled watches on existing keys).
func runRaw(t *testing.T, addr string, n int, own bool) electiontest.ManyResult {
	t.Helper()
	dir := storetest.Dir(freshKey("raw"))
	storetest.CleanupTree(t, openOn(t, addr), dir)
	var kv store.Store
	if own {
		kv = openOn(t, addr)
	} else {
		kv = kvtoolsStore(t, addr)
	}
	return electiontest.Many{N: n, TTL: rawTTL, Wait: rawWait}.Run(t, kv, dir)
}

// rawElections elections on one raw kvtools store: every candidate is
// elected, every follower names it and then sees it stop, nothing is left
// running.
func TestRawElections(t *testing.T) {
	addr := agent(t)
	storetest.NoLeaks(t)
	r := runRaw(t, addr, rawElections, false)
	t.Log(r)
	if !r.OK() {
		t.Fatalf("raw kvtools store: %v", r)
	}
}

// TestRawLimits measures where the raw store stops, and the same load on
// this package's store for comparison (on demand: LEADERSHIP_RAW_LIMITS=1,
// sizes in LEADERSHIP_RAW_LIMITS_N). kvtools' watches of keys that were
// never created end only when their 15s blocking query does: each raw run
// waits for them.
func TestRawLimits(t *testing.T) {
	addr := agent(t)
	for _, n := range electiontest.LimitSizes(t, 50, 60, 70, 75, 80, 90, 100, 150, 300) {
		t.Run(fmt.Sprintf("raw/%d", n), func(t *testing.T) {
			t.Cleanup(func() { // last
				t.Logf("kvtools goroutines left 20s after Close: %d", electiontest.LeftRunning("github.com/kvtools/", 20*time.Second))
				http.DefaultClient.CloseIdleConnections()
			})
			t.Log(runRaw(t, addr, n, false))
		})
		t.Run(fmt.Sprintf("own/%d", n), func(t *testing.T) { t.Log(runRaw(t, addr, n, true)) })
	}
}
