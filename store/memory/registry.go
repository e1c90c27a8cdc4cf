package memory

import (
	"context"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"
)

// StoreName is the name under which the store is registered with valkeyrie.
const StoreName = "memory"

// DefaultLockTTL is the lock TTL used when LockOptions.TTL is not positive.
const DefaultLockTTL = 15 * time.Second

// minTTL is the smallest TTL the store honours; smaller positive TTLs are
// rounded up to it.
const minTTL = time.Millisecond

// Config is the configuration accepted by New. It holds no settings today;
// passing nil is equivalent to passing &Config{}.
type Config struct{}

func init() {
	valkeyrie.Register(StoreName, New)
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

// New is the valkeyrie constructor of the store. endpoints[0] names the
// backend: handles opened with the same name share one backend. options must
// be nil or a *Config. The returned value is a *Store.
func New(ctx context.Context, endpoints []string, options valkeyrie.Config) (store.Store, error) {
	if options != nil {
		if _, ok := options.(*Config); !ok {
			return nil, &store.InvalidConfigurationError{Store: StoreName, Config: options}
		}
	}

	if err := ctx.Err(); err != nil {
		return nil, err
	}

	if len(endpoints) == 0 {
		return nil, ErrNoName
	}

	s, err := Open(endpoints[0])
	if err != nil {
		return nil, err
	}

	return s, nil
}

// Open returns a new handle on the backend called name, creating the backend
// if it does not exist yet. Opening succeeds even while the backend is
// stopped (see StopServer); calls then fail until it is started again.
func Open(name string) (*Store, error) {
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
