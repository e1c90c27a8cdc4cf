package postgres

import (
	"context"
	"net/url"
	"testing"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConformance(t *testing.T) {
	u, err := url.Parse(testDSN(t))
	if err != nil {
		t.Fatalf("%s: %v", dsnEnv, err)
	}
	leadershiptest.Run(t, electiontest.Network("postgres", "postgres", []string{u.Host}, func(ctx context.Context, endpoints []string) (store.Store, error) {
		via := *u
		via.Host = endpoints[0] // through the client's own forwarder
		s, err := Open(ctx, via.String(), &Config{Table: "leadershiptest_kv"})
		if err != nil {
			return nil, err
		}
		return s, nil
	}))
}
