package etcd

import (
	"context"
	"testing"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func network(t *testing.T, env, server string) *leadershiptest.Network {
	return electiontest.Network("etcd", server, endpointsFrom(t, env), func(ctx context.Context, endpoints []string) (store.Store, error) {
		return Open(ctx, Config{Endpoints: endpoints})
	})
}

func TestConformance(t *testing.T) {
	leadershiptest.Run(t, network(t, envSingle, "etcd"))
}

// Killing the member that leads etcd's own Raft must not make two leaders,
// and the election must go on.
func TestClusterConsensusLeaderKilled(t *testing.T) {
	n := network(t, envCluster, "")
	n.BackendName = "etcd cluster"
	electiontest.RunClusterFailover(t, n, "etcd-cluster")
}
