package consul

import (
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

var (
	// ErrInvalidConfig is wrapped by the errors Open returns for an unusable
	// Config.
	ErrInvalidConfig = errors.New("consul: invalid configuration")

	// ErrEmptyKey is returned for a key that is empty once its leading
	// slashes are trimmed.
	ErrEmptyKey = errors.New("consul: empty key")

	// ErrClosed is returned by calls on a closed store.
	// errors.Is(ErrClosed, store.ErrNotReachable) is true.
	ErrClosed = fmt.Errorf("consul: store closed: %w", store.ErrNotReachable)

	// ErrNoLeader is wrapped by Open's error when the agent answers but its
	// cluster has no leader (no consistent read or write can be served).
	ErrNoLeader = errors.New("consul: the cluster has no leader")

	// ErrUnverifiedWrite is returned by AtomicPut on a store made by Wrap
	// when the compare-and-swap succeeded but the pair read back afterwards
	// is not the value written (another write came in between): the write
	// landed, but its index is unknown. Read the key to go on.
	ErrUnverifiedWrite = errors.New("consul: write succeeded but its index could not be verified")
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
	return &UnreachableError{Backend: "consul", Op: op, Endpoints: endpoints, Err: err}
}
