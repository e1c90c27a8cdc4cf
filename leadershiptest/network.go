package leadershiptest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// Network is a Backend for a store reached over TCP. Every client connects
// through Forwarders of its own, one per server endpoint, so the suite can
// cut one client off (Cut blackholes its forwarders) or make it vanish
// (its forwarders close, resetting its connections) while the servers go on
// for everyone else.
type Network struct {
	// BackendName names the backend in test output.
	BackendName string
	// Endpoints are the servers' host:port addresses.
	Endpoints []string
	// Open opens a client of the store on the given endpoints (the
	// forwarders' addresses, in the order of Endpoints). An error matching
	// store.ErrNotReachable is retried for up to 30s.
	Open func(ctx context.Context, endpoints []string) (store.Store, error)
	// LeaseTTL is the TTL of the suite's candidates (default 2s).
	LeaseTTL time.Duration
	// Latency, when not zero, delays every byte between each client and
	// the servers by that much in each direction (Forwarder.SetLatency):
	// a slow link, for RunSlowLink.
	Latency time.Duration
	// Stop and Start, when both are set, stop the store's
	// server and start it again (for StoreRestart, which every backend must
	// survive): how is the caller's business, a script, a container, a
	// service manager. Start returns once the server answers. The
	// harder case is a server that comes back without its data (for
	// instance a data directory wiped between the two). Leave them nil
	// when the server is shared with tests that may run at the same time:
	// StoreRestart is then skipped.
	Stop, Start func(t *testing.T)
}

// Name implements Backend.
func (n *Network) Name() string { return n.BackendName }

// TTL implements Backend.
func (n *Network) TTL() time.Duration {
	if n.LeaseTTL == 0 {
		return 2 * time.Second
	}
	return n.LeaseTTL
}

// Client implements Backend.
func (n *Network) Client(t *testing.T) *Client {
	t.Helper()
	fwds := make([]*Forwarder, len(n.Endpoints))
	addrs := make([]string, len(n.Endpoints))
	for i, ep := range n.Endpoints {
		f, err := NewForwarder(ep)
		if err != nil {
			t.Fatalf("forwarder to %s: %v", ep, err)
		}
		t.Cleanup(func() { _ = f.Close() })
		f.SetLatency(n.Latency)
		fwds[i], addrs[i] = f, f.Addr()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := n.Open(ctx, addrs)
	// A server slowed by a loaded machine may miss one dial timeout: try
	// again while the 30s last.
	for errors.Is(err, store.ErrNotReachable) && ctx.Err() == nil {
		time.Sleep(100 * time.Millisecond)
		kv, err = n.Open(ctx, addrs)
	}
	if err != nil {
		t.Fatalf("open %s client: %v", n.BackendName, err)
	}
	each := func(do func(*Forwarder)) func() {
		return func() {
			for _, f := range fwds {
				do(f)
			}
		}
	}
	return &Client{
		Store: kv,
		Cut:   each((*Forwarder).Cut),
		Heal:  each((*Forwarder).Heal),
		Vanish: each(func(f *Forwarder) {
			_ = f.Close()
		}),
	}
}

// StopServer implements Restarter with Stop; it skips the test when Stop
// or Start is nil.
func (n *Network) StopServer(t *testing.T) {
	t.Helper()
	if n.Stop == nil || n.Start == nil {
		t.Skip("no server the suite may restart")
	}
	n.Stop(t)
}

// StartServer implements Restarter with Start.
func (n *Network) StartServer(t *testing.T) {
	t.Helper()
	n.Start(t)
}
