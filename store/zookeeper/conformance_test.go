package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// openEndpoints opens a client on endpoints with the defaults, except
// that the open may take as long as ctx allows (the harness gives it 30s):
// a loaded machine or a cluster still settling after another test can take
// longer than the default 5s to answer a first request.
func openEndpoints(ctx context.Context, endpoints []string) (store.Store, error) {
	return Open(ctx, Config{Endpoints: endpoints, DialTimeout: openBudget})
}

// openBudget bounds opening a client in the conformance suites.
const openBudget = 30 * time.Second

func TestConformance(t *testing.T) {
	leadershiptest.Run(t, electiontest.Network("zookeeper", "zookeeper", servers(t, envSingle), openEndpoints))
}

// Killing the node that leads ZooKeeper's own quorum must not make two
// leaders, and the election must go on.
func TestEnsembleQuorumLeaderKilled(t *testing.T) {
	n := electiontest.Network("zookeeper ensemble", "", servers(t, envEnsemble), openEndpoints)
	electiontest.RunClusterFailover(t, n, "zookeeper-ensemble")
}
