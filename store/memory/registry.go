package memory

import (
	"context"
	"sync"
	"time"
)

// DefaultLockTTL is the lock TTL used when LockOptions.TTL is not positive.
const DefaultLockTTL = 15 * time.Second

// minTTL is the smallest TTL the store honours; smaller positive TTLs are
// rounded up to it.
const minTTL = time.Millisecond

// Config is the configuration of Open, and of New (which may be given nil,
// the same as &Config{}).
type Config struct {
	// Name names the backend: handles opened with the same name in this
	// process share one backend. Open needs it; New takes the name from
	// endpoints[0] and uses Name only when endpoints is empty.
	Name string
}

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

// InUse reports whether this process has a backend called name: whether
// a handle was ever opened on it. A backend lives as long as the process,
// so a name not in use is an empty store. (The command uses it to warn
// that memory:// is not shared between processes.)
func InUse(name string) bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.backends[name] != nil
}

// Open returns a new handle on the backend cfg.Name, creating the backend if
// it does not exist yet: the shape of every adapter's Open. Opening
// succeeds even while the backend is stopped (see StopServer); calls then
// fail until it is started again. It fails with ErrNoName for an empty
// name, and with ctx's error if ctx is already done.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		return nil, ErrNoName
	}

	b := backendFor(name)

	s := &Store{
		b:        b,
		closedCh: make(chan struct{}),
		owned:    make(map[*entry]struct{}),
	}

	b.mu.Lock()
	b.handles[s] = struct{}{}
	b.mu.Unlock()

	return s, nil
}
