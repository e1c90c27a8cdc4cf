package open

import (
	"errors"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

var (
	// ErrInvalidURL matches every error about a malformed store URL (see
	// ConfigError).
	ErrInvalidURL = errors.New("open: invalid store URL")
	// ErrUnknownScheme is returned for a URL whose scheme names no backend.
	ErrUnknownScheme = errors.New("open: unknown store scheme")
	// ErrBackendLeftOut is returned for a URL whose backend's adapter the
	// program did not import (etcd:// without store/etcd, k8s:// without
	// store/kubernetes; see Register). The error is a
	// *ConfigError that also matches ErrInvalidURL and ErrUnknownScheme,
	// and names the import to add.
	ErrBackendLeftOut = errors.New("open: backend left out of this build")
	// ErrNoURL is returned by FromEnv when the variable is unset or empty.
	ErrNoURL = errors.New("open: no store URL")
)

// ConfigError names the part of a store URL that is wrong (Field: "scheme",
// "host", "user", "tls", "ca", "dial_timeout", ...). It matches
// ErrInvalidURL, and ErrUnknownScheme when the scheme is the problem.
// Secrets are never included in Value.
type ConfigError = adapter.ConfigError

// storeURL is the Invalid of this package's *ConfigError: its text starts
// the message ("open: store URL: host: ..."), and it matches ErrInvalidURL.
type storeURL struct{}

// Error is the start of the message.
func (storeURL) Error() string { return "open: store URL" }

// Is reports whether target is ErrInvalidURL.
func (storeURL) Is(target error) bool { return target == ErrInvalidURL }

// errLeftOut is the Err of the *ConfigError for a backend this build leaves
// out: it matches ErrBackendLeftOut and ErrUnknownScheme.
var errLeftOut = leftOut{}

type leftOut struct{}

func (leftOut) Error() string { return ErrBackendLeftOut.Error() }

func (leftOut) Is(target error) bool {
	return target == ErrBackendLeftOut || target == ErrUnknownScheme
}
