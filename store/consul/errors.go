package consul

import (
	"errors"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// backend names Consul in messages.
const backend = "consul"

var (
	// ErrInvalidConfig is wrapped by the errors Open returns for an unusable
	// Config. It matches the shared store.ErrInvalidConfig.
	ErrInvalidConfig = adapter.Sentinel("consul: invalid configuration", lstore.ErrInvalidConfig)

	// ErrEmptyKey is returned for a key that is empty once its leading
	// slashes are trimmed.
	ErrEmptyKey = errors.New("consul: empty key")

	// ErrClosed is returned by calls on a closed store.
	// errors.Is(ErrClosed, store.ErrNotReachable) is true, and so are
	// the shared store.ErrClosed and store.ErrUnreachable.
	ErrClosed = adapter.Sentinel("consul: store closed: "+store.ErrNotReachable.Error(), lstore.ErrClosed, store.ErrNotReachable)

	// ErrNoLeader is wrapped by Open's error when the agent answers but its
	// cluster has no leader (no consistent read or write can be served).
	// It matches store.ErrNotReachable (the shared store.ErrUnreachable).
	ErrNoLeader = adapter.Sentinel("consul: the cluster has no leader", lstore.ErrUnreachable)
)

// UnreachableError reports that the Consul agent at Endpoints could not be
// reached or did not answer in time during Op, or answered with a server
// error (5xx, such as "No cluster leader"). A write's outcome is then
// unknown. errors.Is(err, store.ErrNotReachable) is true, and Err is
// reachable with errors.Is and errors.As too.
type UnreachableError = adapter.UnreachableError

// ConfigError is an unusable Config, returned by Open before any network
// activity: Field names the Config field at fault.
// errors.Is(err, ErrInvalidConfig) is true.
type ConfigError = adapter.ConfigError

// unreachable is the *UnreachableError of op.
func unreachable(op string, endpoints []string, err error) error {
	return &UnreachableError{Backend: backend, Op: op, Endpoints: endpoints, Err: err}
}
