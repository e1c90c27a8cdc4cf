package zookeeper

import (
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	kvzk "github.com/kvtools/zookeeper"

	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// raw is kvtools/zookeeper's store, as valkeyrie.NewStore("zookeeper")
// makes it, next to this package's store (see electiontest.Raw): 50
// elections, well under where it stops.
func raw(t *testing.T) electiontest.Raw {
	eps := servers(t, envSingle) // skips without a server
	return electiontest.Raw{
		N:    50,
		Open: func(t *testing.T) store.Store { return kvtoolsStore(t, eps) },
		Own:  func(t *testing.T) store.Store { return openOn(t, eps) },
		Key:  func(*testing.T) string { return freshKey("raw") },
	}
}

// TestRawElections: see electiontest.Raw.Elections.
func TestRawElections(t *testing.T) { raw(t).Elections(t) }

// TestRawLimits (on demand): see electiontest.Raw.Limits.
func TestRawLimits(t *testing.T) { raw(t).Limits(t, 100, 300, 1000, 1500, 2000) }

// TestRawConformance: the conformance suite on kvtools/zookeeper's store
// as valkeyrie.NewStore("zookeeper") makes it (see
// electiontest.RawConformance), without the server restarts: the suite's
// restarts wipe the server, which then refuses every attempt of a zk
// client that saw later transactions to resume its session ("has seen
// zxid"), and kvtools' client retries forever (this package's store opens
// a new client: session.go, monitor). No engine can read through a client
// that never connects again.
func TestRawConformance(t *testing.T) {
	electiontest.RawConformance(t, "zookeeper raw kvtools", "", kvzk.StoreName, servers(t, envSingle),
		&kvzk.Config{ConnectionTimeout: 4 * time.Second}, 50)
}
