package consul

import (
	"context"
	"os"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/leadershiptest"
)

func TestConformance(t *testing.T) {
	ep := os.Getenv("LEADERSHIP_CONSUL")
	if ep == "" {
		t.Skip("LEADERSHIP_CONSUL is not set (scripts/servers.sh starts a Consul agent)")
	}
	n := &leadershiptest.Network{
		BackendName: "consul",
		Endpoints:   []string{ep},
		Open: func(ctx context.Context, endpoints []string) (store.Store, error) {
			return Open(ctx, Config{Endpoints: endpoints})
		},
	}
	// The test server keeps its data in memory only, so a restart wipes
	// the election record: StoreRestart is not run on it (an open issue:
	// a store that lost its data ends the election for its participants).
	leadershiptest.Run(t, n)
}
