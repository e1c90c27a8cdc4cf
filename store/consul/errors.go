package consul

import (
	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// backend names Consul in messages.
const backend = "consul"

var (
	// errInvalidConfig is wrapped by the errors Open returns for an unusable
	// Config. It matches the shared store.ErrInvalidConfig.
	errInvalidConfig = adapter.Sentinel("consul: invalid configuration", lstore.ErrInvalidConfig)

	// errEmptyKey is returned for a key that is empty once its leading
	// slashes are trimmed.
	errEmptyKey = adapter.Sentinel("consul: empty key", lstore.ErrInvalidKey)

	// errClosed is returned by calls on a closed store.
	// errors.Is(errClosed, store.ErrNotReachable) is true, and so are
	// the shared store.ErrClosed and store.ErrUnreachable.
	errClosed = adapter.Sentinel("consul: store closed: "+store.ErrNotReachable.Error(), lstore.ErrClosed, store.ErrNotReachable)

	// errNoLeader is wrapped by Open's error when the agent answers but its
	// cluster has no leader (no consistent read or write can be served).
	// It matches store.ErrNotReachable (the shared store.ErrUnreachable).
	errNoLeader = adapter.Sentinel("consul: the cluster has no leader", lstore.ErrUnreachable)
)

// unreachableError reports that the Consul agent at Endpoints could not be
// reached or did not answer in time during Op, or answered with a server
// error (5xx, such as "No cluster leader"). A write's outcome is then
// unknown. errors.Is(err, store.ErrNotReachable) is true, and Err is
// reachable with errors.Is and errors.As too.
type unreachableError = adapter.UnreachableError

// configError is an unusable Config, returned by Open before any network
// activity: Field names the Config field at fault.
// errors.Is(err, errInvalidConfig) is true.
type configError = adapter.ConfigError

// unreachable is the *unreachableError of op.
func unreachable(op string, endpoints []string, err error) error {
	return &unreachableError{Backend: backend, Op: op, Endpoints: endpoints, Err: err}
}
