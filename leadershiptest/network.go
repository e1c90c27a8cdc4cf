package leadershiptest

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
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
	// forwarders' addresses, in the order of Endpoints).
	Open func(ctx context.Context, endpoints []string) (store.Store, error)
	// LeaseTTL is the TTL of the suite's candidates (default 2s).
	LeaseTTL time.Duration
	// Server, when set, is the name scripts/servers.sh knows the server by
	// ("etcd", "redis", ...): StoreRestart then stops it, deletes its data
	// and starts it again, empty, with that script. Leave it empty when the
	// server is shared with tests that may run at the same time.
	Server string
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
		fwds[i], addrs[i] = f, f.Addr()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := n.Open(ctx, addrs)
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

// StopServer implements Restarter with scripts/servers.sh: it stops the
// server and wipes its data ("servers.sh stop --wipe"), the harder case of
// a restart, which every backend must survive; it skips the test when
// Server is empty.
func (n *Network) StopServer(t *testing.T) {
	t.Helper()
	if n.Server == "" {
		t.Skip("no server the suite may restart")
	}
	serversScript(t, "stop", "--wipe", n.Server)
}

// StartServer implements Restarter with scripts/servers.sh: the server
// starts empty (PostgreSQL: a new cluster and database).
func (n *Network) StartServer(t *testing.T) {
	t.Helper()
	serversScript(t, "start", n.Server)
}

// serversScript runs the repository's scripts/servers.sh.
func serversScript(t *testing.T, args ...string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "scripts", "servers.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("servers.sh %v: %v\n%s", args, err, out)
	}
}
