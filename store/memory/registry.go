package memory

import (
	"sync"
	"time"
)

// defaultLockTTL is the lock TTL used when LockOptions.TTL is not positive.
const defaultLockTTL = 15 * time.Second

// minTTL is the smallest TTL the store honours; smaller positive TTLs are
// rounded up to it.
const minTTL = time.Millisecond

// registry maps backend names to the backends shared by every handle opened
// with that name in this process. Backends live as long as the process.
var registry = struct {
	mu       sync.Mutex
	backends map[string]*backend
}{backends: make(map[string]*backend)}

// backendFor returns the backend called name, creating it if needed.
func backendFor(name string) *backend {
	registry.mu.Lock()
	defer registry.mu.Unlock()

	b := registry.backends[name]
	if b == nil {
		b = newBackend(name)
		registry.backends[name] = b
	}

	return b
}

// inUse reports whether this process has a backend called name: whether
// a handle was ever opened on it. A backend lives as long as the process,
// so a name not in use is an empty store. (The command uses it to warn
// that memory:// is not shared between processes.)
func inUse(name string) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.backends[name] != nil
}
