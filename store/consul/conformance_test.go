package consul

import (
	"testing"

	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConformance(t *testing.T) {
	// The test server keeps its data in memory only: StoreRestart also
	// proves that an election survives a store that lost its data.
	open := electiontest.Opener(Open, func(endpoints []string) Config { return Config{Endpoints: endpoints} })
	electiontest.Conformance(t, "consul", "consul", []string{agent(t)}, open)
}
