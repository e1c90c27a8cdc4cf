package etcd

import (
	"testing"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// openEndpoints opens a client with the defaults, except that the open may
// take electiontest.OpenBudget.
var openEndpoints = electiontest.Opener(Open, func(endpoints []string) Config {
	return Config{Endpoints: endpoints, DialTimeout: electiontest.OpenBudget}
})

func TestConformance(t *testing.T) {
	leadershiptest.Run(t, electiontest.Network("etcd", "etcd", endpointsFrom(t, envSingle), openEndpoints))
}

// Killing the member that leads etcd's own Raft must not make two leaders,
// and the election must go on.
func TestClusterConsensusLeaderKilled(t *testing.T) {
	n := electiontest.Network("etcd cluster", "", endpointsFrom(t, envCluster), openEndpoints)
	electiontest.RunClusterFailover(t, n, "etcd-cluster")
}
