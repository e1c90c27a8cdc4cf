package zookeeper

import (
	"context"
	"testing"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func network(t *testing.T, env, server string) *leadershiptest.Network {
	return electiontest.Network("zookeeper", server, servers(t, env), func(ctx context.Context, endpoints []string) (store.Store, error) {
		return Open(ctx, Config{Endpoints: endpoints})
	})
}

func TestConformance(t *testing.T) {
	leadershiptest.Run(t, network(t, envSingle, "zookeeper"))
}

// Killing the node that leads ZooKeeper's own quorum must not make two
// leaders, and the election must go on.
func TestEnsembleQuorumLeaderKilled(t *testing.T) {
	n := network(t, envEnsemble, "")
	n.BackendName = "zookeeper ensemble"
	electiontest.RunClusterFailover(t, n, "zookeeper-ensemble")
}
