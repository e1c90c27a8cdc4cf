package postgres

import (
	"context"
	"net/url"
	"os"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/leadershiptest"
)

func TestConformance(t *testing.T) {
	dsn := os.Getenv("LEADERSHIP_POSTGRES")
	if dsn == "" {
		t.Skip("LEADERSHIP_POSTGRES is not set (scripts/servers.sh starts PostgreSQL)")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("LEADERSHIP_POSTGRES: %v", err)
	}
	n := &leadershiptest.Network{
		BackendName: "postgres",
		Endpoints:   []string{u.Host},
		Open: func(ctx context.Context, endpoints []string) (store.Store, error) {
			via := *u
			via.Host = endpoints[0] // through the client's own forwarder
			s, err := Open(ctx, via.String(), &Config{Table: "leadershiptest_kv"})
			if err != nil {
				return nil, err
			}
			return s, nil
		},
	}
	if os.Getenv("LEADERSHIP_RESTART_SERVERS") == "1" {
		n.Server = "postgres"
	}
	leadershiptest.Run(t, n)
}
