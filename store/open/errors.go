package open

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalidURL matches every error about a malformed store URL (see
	// ConfigError).
	ErrInvalidURL = errors.New("open: invalid store URL")
	// ErrUnknownScheme is returned for a URL whose scheme names no backend.
	ErrUnknownScheme = errors.New("open: unknown store scheme")
	// ErrBackendLeftOut is returned for a URL whose backend this build
	// leaves out (built with its leadership_no_NAME tag). The error is a
	// *ConfigError that also matches ErrInvalidURL and ErrUnknownScheme.
	ErrBackendLeftOut = errors.New("open: backend left out of this build")
	// ErrNoURL is returned by FromEnv when the variable is unset or empty.
	ErrNoURL = errors.New("open: no store URL")
)

// ConfigError names the part of a store URL that is wrong. It matches
// ErrInvalidURL, and ErrUnknownScheme when the scheme is the problem.
// Secrets are never included in Value.
type ConfigError struct {
	Field  string // "scheme", "host", "user", "tls", "ca", "dial_timeout", ...
	Value  string // the offending value, "" for secrets
	Reason string
	Err    error // an underlying error (a file that cannot be read, ...), or nil
}

// Error describes the error.
func (e *ConfigError) Error() string {
	msg := fmt.Sprintf("open: store URL: %s", e.Field)
	if e.Value != "" {
		msg += fmt.Sprintf(" %q", e.Value)
	}
	msg += ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error, if any.
func (e *ConfigError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidURL, or ErrUnknownScheme for a
// scheme error.
func (e *ConfigError) Is(target error) bool {
	return target == ErrInvalidURL || (target == ErrUnknownScheme && e.Field == "scheme")
}
