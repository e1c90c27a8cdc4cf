package etcd

import (
	"testing"

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
