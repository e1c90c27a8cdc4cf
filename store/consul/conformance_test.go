package consul

import (
	"context"
	"testing"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConformance(t *testing.T) {
	// The test server keeps its data in memory only: StoreRestart also
	// proves that an election survives a store that lost its data.
	leadershiptest.Run(t, electiontest.Network("consul", "consul", []string{agent(t)}, func(ctx context.Context, endpoints []string) (store.Store, error) {
		return Open(ctx, Config{Endpoints: endpoints})
	}))
}
