package zookeeper

import (
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

func TestElectionSmoke(t *testing.T) {
	eps := servers(t, envSingle)
	key := freshKey("leader")
	cleanup(t, openOn(t, eps), prefixOf(key))
	runSmoke(t, func(t *testing.T) store.Store { return openOn(t, eps) }, key)
}

func TestElectionSmokeEnsemble(t *testing.T) {
	eps := servers(t, envEnsemble)
	key := freshKey("leader")
	cleanup(t, openOn(t, eps), prefixOf(key))
	runSmoke(t, func(t *testing.T) store.Store { return openOn(t, eps) }, key)
}

// The engine on kvtools' store made by valkeyrie.NewStore, fixed by Wrap.
func TestElectionSmokeWrapped(t *testing.T) {
	eps := servers(t, envSingle)
	key := freshKey("leader")
	cleanup(t, openOn(t, eps), prefixOf(key))
	runSmoke(t, func(t *testing.T) store.Store { return Wrap(kvtoolsStore(t, eps), 5*time.Second) }, key)
}
