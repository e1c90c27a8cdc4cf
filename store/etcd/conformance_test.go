package etcd

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
	leadershiptest.Run(t, electiontest.Network("etcd", "etcd", endpointsFrom(t, envSingle), openEndpoints))
}

// Killing the member that leads etcd's own Raft must not make two leaders,
// and the election must go on.
func TestClusterConsensusLeaderKilled(t *testing.T) {
	n := electiontest.Network("etcd cluster", "", endpointsFrom(t, envCluster), openEndpoints)
	electiontest.RunClusterFailover(t, n, "etcd-cluster")
}
