package zookeeper

import (
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// smoke runs electiontest.Smoke on a fresh key, with clients from open.
func smoke(t *testing.T, eps []string, open func(t *testing.T) store.Store) {
	key := freshKey("leader")
	storetest.CleanupTree(t, openOn(t, eps), storetest.Dir(key))
	electiontest.Smoke(t, key, open)
}

func TestConformance(t *testing.T) {
	electiontest.Conformance(t, "zookeeper", "zookeeper", servers(t, envSingle), openEndpoints)
}

// Killing the node that leads ZooKeeper's own quorum must not make two
// leaders, and the election must go on.
func TestEnsembleQuorumLeaderKilled(t *testing.T) {
	electiontest.RunClusterFailover(t, "zookeeper ensemble", servers(t, envEnsemble), openEndpoints, "zookeeper-ensemble")
}

// The library on the three-server ensemble, every client on all servers.
// (TestConformance covers the single server; on the ensemble it only runs
// the failover, which needs LEADERSHIP_RESTART_SERVERS.)
func TestElectionSmokeEnsemble(t *testing.T) {
	eps := servers(t, envEnsemble)
	smoke(t, eps, func(t *testing.T) store.Store { return openOn(t, eps) })
}

// The engine on kvtools' store made by valkeyrie.NewStore, fixed by Wrap.
// (TestConformance covers the store Open returns.)
func TestElectionSmokeWrapped(t *testing.T) {
	eps := servers(t, envSingle)
	smoke(t, eps, func(t *testing.T) store.Store { return wrap(kvtoolsStore(t, eps), 5*time.Second) })
}

// Fenced writes on a store from Open (a refused write creates no parent
// either: they are created in the same multi as the node): see
// storetest.Fenced.
func TestFencedPut(t *testing.T) {
	storetest.Fenced(t, openSingle(t), storetest.Dir(freshKey("fenced")))
}

// kvtools' store, given to Wrap, cannot write fenced.
func TestWrappedNotFenced(t *testing.T) {
	storetest.NotFenced(t, wrap(kvtoolsStore(t, servers(t, envSingle)), time.Second))
}

// The election over a link with 300 ms round trips (electiontest.SlowLink).
func TestSlowLink(t *testing.T) {
	electiontest.SlowLink(t, "zookeeper", servers(t, envSingle), openEndpoints)
}
