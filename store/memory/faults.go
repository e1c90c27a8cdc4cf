package memory

import (
	"fmt"
	"sort"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/memfault"
)

// The test faults of a backend (stopping its server, losing its data) and
// of a handle (Disconnect, Reconnect), and InUse, are reached through
// internal/memfault, out of this package's API.
func init() {
	memfault.Hooks.StopServer = stopServer
	memfault.Hooks.StartServer = startServer
	memfault.Hooks.LoseData = loseData
	memfault.Hooks.InUse = inUse
	memfault.HandleHooks.Disconnect = func(h store.Store) { handle(h, "Disconnect").setDisconnected(true) }
	memfault.HandleHooks.Reconnect = func(h store.Store) { handle(h, "Reconnect").setDisconnected(false) }
}

// handle is h, for the fault what of one handle: a *Store, else a panic.
func handle(h store.Store, what string) *Store {
	s, ok := h.(*Store)
	if !ok || s == nil {
		panic(fmt.Sprintf("memfault: %s of a %T, not a *memory.Store", what, h))
	}
	return s
}

// setDisconnected cuts the handle off from its backend (v), like a network
// partition, or heals the cut (!v): see memfault.Disconnect and Reconnect.
// Every call of a cut handle fails with errDisconnected (which wraps
// store.ErrNotReachable). It is idempotent, safe from any goroutine, and a
// no-op on a closed handle.
func (s *Store) setDisconnected(v bool) {
	b := s.b

	b.mu.Lock()
	defer b.mu.Unlock()

	if s.closed || s.disconnected == v {
		return
	}

	was := s.reachable()
	s.disconnected = v
	b.reachChanged(s, was)
	b.broadcastState()
}

// stopServer makes the backend called name unreachable for all its handles,
// as if the server process were down: every call fails with errServerDown
// (which wraps store.ErrNotReachable) and no handle can keep keys or locks
// alive. Data survives and TTL clocks keep running, so leases whose owners
// cannot renew expire during the outage. The backend is created if it does
// not exist yet. stopServer is idempotent.
func stopServer(name string) {
	backendFor(name).setDown(true)
}

// startServer brings back a backend stopped with stopServer: handles that
// are open and connected work again, resume keep-alive of what they still
// hold, and their watches receive the current state of what changed during
// the outage. startServer is idempotent.
func startServer(name string) {
	backendFor(name).setDown(false)
}

func (b *backend) setDown(v bool) {
	b.mu.Lock()
	defer b.mu.Unlock()

	if b.down == v {
		return
	}

	was := make(map[*Store]bool, len(b.handles))
	for h := range b.handles {
		was[h] = h.reachable()
	}

	b.down = v

	for h := range b.handles {
		b.reachChanged(h, was[h])
	}

	b.broadcastState()
}

// loseData wipes the backend called name as a server that restarted without
// persistence would come back: every key and lock is gone, and the
// modification index starts again from zero, so indexes seen before are
// handed out again. Open watches see each key deleted. It works whether
// the server is up or stopped, and creates the backend if needed.
func loseData(name string) {
	b := backendFor(name)
	b.mu.Lock()
	defer b.mu.Unlock()

	keys := make([]string, 0, len(b.entries))
	for k := range b.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	changes := make([]change, 0, len(keys))
	for _, k := range keys {
		changes = append(changes, b.remove(b.entries[k]))
	}
	b.index = 0
	b.publish(changes...)
	b.broadcastState()
}
