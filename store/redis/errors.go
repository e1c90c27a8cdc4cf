package redis

import (
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

var (
	// ErrInvalidConfig is matched (errors.Is) by every *ConfigError.
	ErrInvalidConfig = errors.New("redis: invalid configuration")

	// ErrCreateUnconfirmed is returned by AtomicPut with previous == nil when
	// kvtools reported store.ErrKeyExists but a read shows that the key does
	// not exist: kvtools reports every failure of its SETNX (a timeout, a lost
	// connection) as ErrKeyExists. The create did not take effect, or was
	// undone by a later delete. It matches store.ErrNotReachable.
	ErrCreateUnconfirmed = fmt.Errorf("redis: create not confirmed (SETNX failed or its reply was lost, and the key does not exist): %w", store.ErrNotReachable)
)

// ConfigError is an unusable Config, returned by Open before any network
// activity: Field names the Config field at fault.
// errors.Is(err, ErrInvalidConfig) is true.
type ConfigError = adapter.ConfigError

// UnreachableError reports that Open could not complete a round trip with
// the server (Endpoints holds its address) within its DialTimeout.
// errors.Is(err, store.ErrNotReachable) is true, and Err (the client's
// error) is reachable with errors.Is and errors.As too.
type UnreachableError = adapter.UnreachableError

// invalid is the *ConfigError of field.
func invalid(field, reason string) error {
	return &ConfigError{Invalid: ErrInvalidConfig, Field: field, Reason: reason}
}
