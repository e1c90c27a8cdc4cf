package etcd

import (
	"testing"
	"time"

	"github.com/kvtools/etcdv3"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// raw is kvtools/etcdv3's store, as valkeyrie.NewStore("etcdv3") makes
// it, next to this package's store (see electiontest.Raw): 50 elections,
// well under where it stops.
func raw(t *testing.T) electiontest.Raw {
	cfg := serverConfig(t) // skips without a server
	return electiontest.Raw{
		N: 50,
		Open: func(t *testing.T) store.Store {
			return electiontest.OpenRaw(t, etcdv3.StoreName, cfg.Endpoints, &etcdv3.Config{ConnectionTimeout: 5 * time.Second})
		},
		Own: func(t *testing.T) store.Store { return openClient(t, cfg) },
		Key: uniqueKey,
	}
}

// TestRawElections: see electiontest.Raw.Elections.
func TestRawElections(t *testing.T) { raw(t).Elections(t) }

// TestRawLimits (on demand; without -race, whose limit of 8128 goroutines
// a raw store reaches at about 300 elections): see electiontest.Raw.Limits.
func TestRawLimits(t *testing.T) { raw(t).Limits(t, 100, 300, 1000, 1500, 2000) }

// TestRawConformance: the conformance suite on kvtools/etcdv3's store as
// valkeyrie.NewStore("etcdv3") makes it (see electiontest.RawConformance).
func TestRawConformance(t *testing.T) {
	electiontest.RawConformance(t, "etcd raw kvtools", "etcd", etcdv3.StoreName, endpointsFrom(t, envSingle),
		&etcdv3.Config{ConnectionTimeout: electiontest.OpenBudget}, 50)
}
