package consul

import (
	"net/http"
	"testing"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

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
