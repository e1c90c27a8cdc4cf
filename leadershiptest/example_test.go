package leadershiptest_test

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/leadership-go/leadership/leadershiptest"
)

// tcpBackend runs the suite against a server reached over TCP, here a
// Redis server on 127.0.0.1:6379 with the kvtools/redis store registered
// (import _ "github.com/kvtools/redis"). Each client gets its own
// Forwarder, so that the suite can cut it off or make it vanish while the
// server keeps serving the others.
type tcpBackend struct {
	addr string
}

func (b tcpBackend) Name() string { return "redis" }

// TTL is short, but long enough for the server to answer reliably.
func (b tcpBackend) TTL() time.Duration { return 2 * time.Second }

func (b tcpBackend) Client(t *testing.T) *leadershiptest.Client {
	fwd, err := leadershiptest.NewForwarder(b.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fwd.Close() })
	kv, err := valkeyrie.NewStore(context.Background(), "redis", []string{fwd.Addr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &leadershiptest.Client{
		Store:  kv,
		Cut:    fwd.Cut,
		Heal:   fwd.Heal,
		Vanish: func() { _ = fwd.Close() },
	}
}

// A backend's test package calls Run from a test function:
//
//	func TestConformance(t *testing.T) {
//		if testing.Short() {
//			leadershiptest.ManyElections = 100
//		}
//		leadershiptest.Run(t, tcpBackend{addr: "127.0.0.1:6379"})
//	}
func Example_backend() {
	var _ leadershiptest.Backend = tcpBackend{addr: "127.0.0.1:6379"}
}
