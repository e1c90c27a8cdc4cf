package etcd

import (
	"context"
	"testing"

	"github.com/kvtools/etcdv3"
	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConformance(t *testing.T) {
	electiontest.Conformance(t, "etcd", "etcd", endpointsFrom(t, envSingle), openEndpoints)
}

// Killing the member that leads etcd's own Raft must not make two leaders,
// and the election must go on.
func TestClusterConsensusLeaderKilled(t *testing.T) {
	electiontest.RunClusterFailover(t, "etcd cluster", endpointsFrom(t, envCluster), openEndpoints, "etcd-cluster")
}

// The library on the three-member cluster, every client on all members.
// (TestConformance covers the single member; on the cluster it only runs
// the failover, which needs LEADERSHIP_RESTART_SERVERS.)
func TestElectionCluster(t *testing.T) {
	cfg := Config{Endpoints: endpointsFrom(t, envCluster)}
	electiontest.Smoke(t, uniqueKey(t), func(t *testing.T) store.Store { return openClient(t, cfg) })
}

// The election over a link with 300 ms round trips (electiontest.SlowLink),
// on this package's store and on kvtools' (valkeyrie.NewStore("etcdv3")).
func TestSlowLink(t *testing.T) {
	eps := endpointsFrom(t, envSingle)
	t.Run("adapter", func(t *testing.T) { electiontest.SlowLink(t, "etcd", eps, openEndpoints) })
	t.Run("raw", func(t *testing.T) {
		electiontest.SlowLink(t, "etcd raw kvtools", eps, func(ctx context.Context, endpoints []string) (store.Store, error) {
			return valkeyrie.NewStore(ctx, etcdv3.StoreName, endpoints, &etcdv3.Config{ConnectionTimeout: electiontest.OpenBudget})
		})
	})
}
