package redis

import (
	"io"
	"log"
	"testing"

	kvredis "github.com/kvtools/redis"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// rawStore opens kvtools/redis' store as valkeyrie.NewStore("redis") makes
// it (raw codec, default pool), closed at cleanup. kvtools logs every
// watch that ends ("watchLoop in Watch err: context canceled") to the
// standard logger: silenced while the test runs.
func rawStore(t *testing.T, endpoints []string) store.Store {
	t.Helper()
	kv := electiontest.OpenRaw(t, kvredis.StoreName, endpoints, nil)
	out := log.Writer()
	log.SetOutput(io.Discard)
	t.Cleanup(func() { log.SetOutput(out) })
	return kv
}

// raw is kvtools/redis' store next to this package's store (see
// electiontest.Raw): 50 elections, well under where it stops.
func raw(t *testing.T) electiontest.Raw {
	cfg := serverConfig(t) // skips without a server
	return electiontest.Raw{
		N:    50,
		Open: func(t *testing.T) store.Store { return rawStore(t, cfg.Endpoints) },
		Own:  func(t *testing.T) store.Store { return openClient(t, cfg) },
		Key:  uniqueKey,
	}
}

// TestRawElections: see electiontest.Raw.Elections.
func TestRawElections(t *testing.T) { raw(t).Elections(t) }

// TestRawLimits (on demand; without -race): see electiontest.Raw.Limits.
func TestRawLimits(t *testing.T) { raw(t).Limits(t, 100, 300, 1000, 1500, 2000) }
