package adapter

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
)

// ConfigError is an unusable configuration, reported before any network
// activity. It names the field at fault and, unless it is a secret, the
// offending value. errors.Is(err, Invalid) is true, and Err, when set, is
// reachable with errors.Is and errors.As too.
type ConfigError struct {
	// Invalid is the sentinel of the package that reports the error (such
	// as etcd.ErrInvalidConfig), or an error that matches it; its text
	// starts the message.
	Invalid error
	// Field is the Config field, or the part of a URL, at fault.
	Field string
	// Value is the offending value, "" for secrets.
	Value string
	// Reason says what is wrong.
	Reason string
	// Err is an underlying error (a file that cannot be read, ...), or nil.
	Err error
}

// Error describes the error.
func (e *ConfigError) Error() string {
	msg := "invalid configuration"
	if e.Invalid != nil {
		msg = e.Invalid.Error()
	}
	msg += ": " + e.Field
	if e.Value != "" {
		msg += fmt.Sprintf(" %q", e.Value)
	}
	msg += ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether Invalid is, or matches, target, or target is the
// shared vocabulary's ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool {
	return target == lstore.ErrInvalidConfig || e.Invalid != nil && errors.Is(e.Invalid, target)
}

// Unwrap returns the underlying error, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

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
