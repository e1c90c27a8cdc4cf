package consul

import (
	"net/http"
	"testing"
	"time"

	kvconsul "github.com/kvtools/consul"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConformance(t *testing.T) {
	// The test server keeps its data in memory only: StoreRestart also
	// proves that an election survives a store that lost its data.
	open := electiontest.Opener(Open, func(endpoints []string) Config { return Config{Endpoints: endpoints} })
	electiontest.Conformance(t, "consul", "consul", []string{agent(t)}, open)
}

// The engine on kvtools' store made by valkeyrie.NewStore, fixed by Wrap.
// (TestConformance covers the store Open returns.)
func TestElectionSmokeWrapped(t *testing.T) {
	addr := agent(t)
	key := freshKey("leader")
	storetest.CleanupTree(t, openOn(t, addr), storetest.Dir(key))
	electiontest.Smoke(t, key, func(t *testing.T) store.Store { return wrap(kvtoolsStore(t, addr), 5*time.Second) })
}

// raw is kvtools/consul's store, as valkeyrie.NewStore("consul") makes it,
// next to this package's store (see electiontest.Raw): 30 elections, under
// where it stops. Each election here holds two of the agent's 200
// connections per client address (one per watch: the candidate's and the
// follower's), a budget shared with every other test process on this
// machine. kvtools' watches of keys that were never created end only when
// their 15s blocking query does: each raw run of TestRawLimits waits for
// them, and then closes the idle connections of kvtools' client.
func raw(t *testing.T) electiontest.Raw {
	addr := agent(t) // skips without an agent
	return electiontest.Raw{
		N:        30,
		Open:     func(t *testing.T) store.Store { return kvtoolsStore(t, addr) },
		Own:      func(t *testing.T) store.Store { return openOn(t, addr) },
		Key:      func(*testing.T) string { return freshKey("raw") },
		AfterRaw: http.DefaultClient.CloseIdleConnections,
	}
}

// TestRawElections: see electiontest.Raw.Elections.
func TestRawElections(t *testing.T) { raw(t).Elections(t) }

// TestRawLimits (on demand): see electiontest.Raw.Limits.
func TestRawLimits(t *testing.T) { raw(t).Limits(t, 50, 60, 70, 75, 80, 90, 100, 150, 300) }

// Fenced writes on a store from Open: see storetest.Fenced.
func TestFencedPut(t *testing.T) {
	storetest.Fenced(t, openAgent(t), storetest.Dir(freshKey("fenced")))
}

// kvtools' store, given to Wrap, cannot write fenced.
func TestWrappedNotFenced(t *testing.T) {
	storetest.NotFenced(t, wrap(kvtoolsStore(t, agent(t)), time.Second))
}

// TestRawConformance: the conformance suite on kvtools/consul's store as
// valkeyrie.NewStore("consul") makes it (see electiontest.RawConformance),
// with 20 elections in ManyElections: each holds two of the agent's 200
// connections per client address (see raw).
func TestRawConformance(t *testing.T) {
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	electiontest.RawConformance(t, "consul raw kvtools", "consul", kvconsul.StoreName, []string{agent(t)},
		nil, 20)
}
