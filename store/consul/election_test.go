package consul

import (
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

func TestElectionSmoke(t *testing.T) {
	addr := agent(t)
	key := freshKey("leader")
	cleanup(t, openOn(t, addr), prefixOf(key))
	runSmoke(t, func(t *testing.T) store.Store { return openOn(t, addr) }, key)
}

// The engine on kvtools' store made by valkeyrie.NewStore, fixed by Wrap.
func TestElectionSmokeWrapped(t *testing.T) {
	addr := agent(t)
	key := freshKey("leader")
	cleanup(t, openOn(t, addr), prefixOf(key))
	runSmoke(t, func(t *testing.T) store.Store { return Wrap(kvtoolsStore(t, addr), 5*time.Second) }, key)
}
