// Package memfault reaches the test faults of the in-memory store
// (package store/memory) without making them part of its API: stopping
// and restarting a backend's server, losing its data, cutting one handle
// off and healing it, and asking whether this process uses a backend
// name. Package memory sets the hooks in its init, so a program calling
// these has imported it (it opens memory stores); a call before that
// panics.
package memfault

import "github.com/kvtools/valkeyrie/store"

// Hooks are the in-memory store's faults, set by package memory's init.
// They are exported only for package memory; the functions below are the
// way to call them.
var Hooks struct {
	StopServer  func(name string)
	StartServer func(name string)
	LoseData    func(name string)
	InUse       func(name string) bool
}

// HandleHooks are the in-memory store's faults of one handle (h is a
// *memory.Store), set by package memory's init as Hooks are. They are
// exported only for package memory; Disconnect and Reconnect are the way
// to call them.
var HandleHooks struct {
	Disconnect func(h store.Store)
	Reconnect  func(h store.Store)
}

// linked panics when package memory has not set the hooks.
func linked() {
	if Hooks.InUse == nil {
		panic("memfault: package store/memory is not linked in")
	}
}

// StopServer makes the backend called name unreachable for all its
// handles, as if the server process were down: every call fails with an
// error matching store.ErrUnreachable and no handle can keep keys or locks
// alive. Data survives and TTL clocks keep running, so leases whose owners
// cannot renew expire during the outage. The backend is created if it does
// not exist yet. StopServer is idempotent.
func StopServer(name string) { linked(); Hooks.StopServer(name) }

// StartServer brings back a backend stopped with StopServer: handles that
// are open and connected work again, resume keep-alive of what they still
// hold, and their watches receive the current state of what changed during
// the outage. StartServer is idempotent.
func StartServer(name string) { linked(); Hooks.StartServer(name) }

// LoseData wipes the backend called name as a server that restarted
// without persistence would come back: every key and lock is gone, and the
// modification index starts again from zero, so indexes seen before are
// handed out again. Open watches see each key deleted. It works whether
// the server is up or stopped, and creates the backend if needed.
func LoseData(name string) { linked(); Hooks.LoseData(name) }

// InUse reports whether this process has a backend called name: whether a
// handle was ever opened on it. A backend lives as long as the process, so
// a name not in use is an empty store. (The command uses it to warn that
// memory:// is not shared between processes.)
func InUse(name string) bool { linked(); return Hooks.InUse(name) }

// Disconnect cuts the handle h, a *memory.Store, off from its backend,
// like a network partition. Every call then fails with an error matching
// store.ErrUnreachable, blocked Lock calls return it, and the handle no
// longer keeps its keys and locks alive: they expire one TTL after the
// disconnect unless Reconnect comes first. Open watches stay open but
// deliver nothing until Reconnect. Disconnect is idempotent, safe from any
// goroutine, and a no-op on a closed handle; h of another type panics.
func Disconnect(h store.Store) { linked(); HandleHooks.Disconnect(h) }

// Reconnect heals a Disconnect of h: calls work again, keep-alive resumes
// for the keys and locks the handle still holds, and each open watch first
// receives the current state of what changed meanwhile. Reconnect is
// idempotent, safe from any goroutine, and a no-op on a closed handle.
func Reconnect(h store.Store) { linked(); HandleHooks.Reconnect(h) }
