package etcd

import (
	"errors"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// ErrInvalidConfig is matched (errors.Is) by every *ConfigError.
var ErrInvalidConfig = errors.New("etcd: invalid configuration")

// ConfigError is an unusable Config, returned by Open before any network
// activity: Field names the Config field at fault.
// errors.Is(err, ErrInvalidConfig) is true.
type ConfigError = adapter.ConfigError

// UnreachableError reports that Open could not complete a round trip with
// the cluster at Endpoints within its DialTimeout.
// errors.Is(err, store.ErrNotReachable) is true, and Err (the client's
// error) is reachable with errors.Is and errors.As too.
type UnreachableError = adapter.UnreachableError

// invalid is the *ConfigError of field.
func invalid(field, reason string) error {
	return &ConfigError{Invalid: ErrInvalidConfig, Field: field, Reason: reason}
}

// unreachable is the *UnreachableError of Open.
func unreachable(endpoints []string, err error) error {
	return &UnreachableError{Backend: "etcd", Endpoints: endpoints, Err: err}
}
