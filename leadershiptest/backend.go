package leadershiptest

import (
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// Backend gives the suite independent clients of one store, and ways to
// break them.
type Backend interface {
	// Name names the backend in test output.
	Name() string
	// Client opens a new client of the store, independent of every other
	// (its own connection or session), as a separate process would have.
	// The suite closes it; Client may also register cleanups on t.
	Client(t *testing.T) *Client
	// TTL is the lease the suite's candidates use: short, but one the
	// backend honours reliably (for instance 2s).
	TTL() time.Duration
}

// Client is one client of the store under test.
type Client struct {
	// Store is the client's store handle.
	Store store.Store
	// Cut makes the client unable to reach the store while the store keeps
	// running for everyone else, as a network partition would (for instance
	// by blackholing its TCP forwarder). Nil when the backend cannot do it;
	// the tests that need it are skipped.
	Cut func()
	// Heal undoes Cut.
	Heal func()
	// Vanish makes the client disappear without any goodbye, as a killed
	// process would: its connections close, nothing is released. Nil means
	// Store.Close is used.
	Vanish func()
}

// Restarter is implemented by backends whose server the suite may stop and
// start again; the tests that need it are skipped otherwise.
type Restarter interface {
	// StopServer stops the store's server (all clients lose it).
	StopServer(t *testing.T)
	// StartServer starts it again, and returns once it answers. The
	// server may come back with its data or without (Network wipes it):
	// clients must recover either way, by themselves.
	StartServer(t *testing.T)
}
