package consul

import (
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// The engine on kvtools' store made by valkeyrie.NewStore, fixed by Wrap.
// (TestConformance covers the store Open returns.)
func TestElectionSmokeWrapped(t *testing.T) {
	addr := agent(t)
	key := freshKey("leader")
	storetest.CleanupTree(t, openOn(t, addr), storetest.Dir(key))
	electiontest.Smoke(t, key, func(t *testing.T) store.Store { return Wrap(kvtoolsStore(t, addr), 5*time.Second) })
}
