package redis

import (
	"context"
	"os"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/leadershiptest"
)

func TestConformance(t *testing.T) {
	ep := os.Getenv("LEADERSHIP_REDIS")
	if ep == "" {
		t.Skip("LEADERSHIP_REDIS is not set (scripts/servers.sh starts Redis)")
	}
	n := &leadershiptest.Network{
		BackendName: "redis",
		Endpoints:   []string{ep},
		Open: func(ctx context.Context, endpoints []string) (store.Store, error) {
			return Open(ctx, Config{Endpoints: endpoints})
		},
	}
	// The test server keeps its data in memory only: StoreRestart also
	// proves that an election survives a store that lost its data.
	if os.Getenv("LEADERSHIP_RESTART_SERVERS") == "1" {
		n.Server = "redis"
	}
	leadershiptest.Run(t, n)
}
