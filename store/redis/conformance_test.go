package redis

import (
	"testing"

	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// The test server keeps its data in memory only: StoreRestart also proves
// that an election survives a store that lost its data.
func TestConformance(t *testing.T) {
	open := electiontest.Opener(Open, func(endpoints []string) Config { return Config{Endpoints: endpoints} })
	electiontest.Conformance(t, "redis", "redis", serverConfig(t).Endpoints, open)
}

// The election over a link with 300 ms round trips (electiontest.SlowLink).
func TestSlowLink(t *testing.T) {
	open := electiontest.Opener(Open, func(endpoints []string) Config { return Config{Endpoints: endpoints} })
	electiontest.SlowLink(t, "redis", serverConfig(t).Endpoints, open)
}
