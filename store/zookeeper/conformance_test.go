package zookeeper

import (
	"context"
	"testing"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// openEndpoints opens a client on endpoints with the defaults.
func openEndpoints(ctx context.Context, endpoints []string) (store.Store, error) {
	return Open(ctx, Config{Endpoints: endpoints})
}

func TestConformance(t *testing.T) {
	leadershiptest.Run(t, electiontest.Network("zookeeper", "zookeeper", servers(t, envSingle), openEndpoints))
}

// Killing the node that leads ZooKeeper's own quorum must not make two
// leaders, and the election must go on.
func TestEnsembleQuorumLeaderKilled(t *testing.T) {
	n := electiontest.Network("zookeeper ensemble", "", servers(t, envEnsemble), openEndpoints)
	electiontest.RunClusterFailover(t, n, "zookeeper-ensemble")
}
