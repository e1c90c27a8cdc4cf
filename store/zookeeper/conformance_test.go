package zookeeper

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
	leadershiptest.Run(t, electiontest.Network("zookeeper", "zookeeper", servers(t, envSingle), openEndpoints))
}

// Killing the node that leads ZooKeeper's own quorum must not make two
// leaders, and the election must go on.
func TestEnsembleQuorumLeaderKilled(t *testing.T) {
	n := electiontest.Network("zookeeper ensemble", "", servers(t, envEnsemble), openEndpoints)
	electiontest.RunClusterFailover(t, n, "zookeeper-ensemble")
}
