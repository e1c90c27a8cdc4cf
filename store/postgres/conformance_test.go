package postgres

import (
	"context"
	"net/url"
	"testing"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConformance(t *testing.T) {
	u, err := url.Parse(testDSN(t))
	if err != nil {
		t.Fatalf("%s: %v", dsnEnv, err)
	}
	electiontest.Conformance(t, "postgres", "postgres", []string{u.Host}, func(ctx context.Context, endpoints []string) (store.Store, error) {
		via := *u
		via.Host = endpoints[0] // through the client's own forwarder
		return Open(ctx, Config{DSN: lstore.Secret(via.String()), Table: "leadershiptest_kv"})
	})
}
