package adapter

import (
	"fmt"
	"strings"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
)

// ConfigError is the shared vocabulary's store.ConfigError, which every
// adapter returns for an unusable Config.
type ConfigError = lstore.ConfigError

// UnreachableError reports that the store's servers could not be reached,
// did not answer in time, or that the connection broke, during Op (a
// write's outcome is then unknown). errors.Is(err, store.ErrNotReachable)
// is true, and Err (the client's or the context's error) is reachable with
// errors.Is and errors.As too.
type UnreachableError struct {
	// Backend names the backend in the message ("etcd", "postgres", ...).
	Backend string
	// Op is the call that failed ("open", "get", ...), or "".
	Op string
	// Endpoints are the servers' addresses, when known.
	Endpoints []string
	// Err is the underlying error.
	Err error
}

// Error describes the error.
func (e *UnreachableError) Error() string {
	msg := e.Backend + ": "
	if e.Op != "" {
		msg += e.Op + ": "
	}
	if len(e.Endpoints) > 0 {
		msg += strings.Join(e.Endpoints, ",")
	} else {
		msg += "server"
	}
	return fmt.Sprintf("%s not reachable: %v", msg, e.Err)
}

// Is reports whether target is the shared store.ErrTLS and Err a TLS
// failure (see TLSFailure).
func (e *UnreachableError) Is(target error) bool {
	return target == lstore.ErrTLS && TLSFailure(e.Err)
}

// Unwrap returns store.ErrNotReachable (the shared vocabulary's
// ErrUnreachable) and the underlying error.
func (e *UnreachableError) Unwrap() []error { return []error{store.ErrNotReachable, e.Err} }
