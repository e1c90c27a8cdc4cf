package etcd

import (
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// backend names etcd in messages.
const backend = "etcd"

// errInvalidConfig is matched (errors.Is) by every *configError. It
// matches the shared store.ErrInvalidConfig.
var errInvalidConfig = adapter.Sentinel("etcd: invalid configuration", lstore.ErrInvalidConfig)

var (
	// errCertificateRefused is matched (errors.Is) by the error of an Open
	// whose server refused the client's TLS certificate: none was given
	// and the server requires one, or it is signed by a CA the server does
	// not trust, expired, or not for client authentication. The message
	// names the certificate (subject, issuer, expiry). It matches the
	// shared store.ErrTLS.
	errCertificateRefused = adapter.Sentinel("the server refused the client certificate", lstore.ErrTLS)

	// errAuthFailed is matched (errors.Is) by the error of an Open whose
	// user name or password etcd refused (etcd's "authentication failed,
	// invalid user ID or password"). It matches etcd's
	// rpctypes.ErrAuthFailed and the shared store.ErrAuth.
	errAuthFailed = adapter.Sentinel(rpctypes.ErrAuthFailed.Error(), rpctypes.ErrAuthFailed, lstore.ErrAuth)

	// errPermissionDenied is matched (errors.Is) by the error of a call
	// that etcd's auth refused: the user's roles do not grant the key
	// (read for Get, List and Watch; write for Put, Delete, AtomicPut and
	// AtomicDelete). It matches etcd's rpctypes.ErrPermissionDenied and
	// the shared store.ErrPermission.
	errPermissionDenied = adapter.Sentinel(rpctypes.ErrPermissionDenied.Error(), rpctypes.ErrPermissionDenied, lstore.ErrPermission)
)

// errNoClient is FencedPut's error on a store whose etcd client is out of
// reach (a kvtools version whose layout this package does not know).
var errNoClient = errors.New("etcd: fenced writes need the kvtools store's client, out of reach")

// kinds tag etcd's refusals with this package's sentinels.
var kinds = []adapter.Kind{
	{Raw: rpctypes.ErrAuthFailed, Sentinel: errAuthFailed},
	{Raw: rpctypes.ErrPermissionDenied, Sentinel: errPermissionDenied},
}

// configError is an unusable Config, returned by Open before any network
// activity: Field names the Config field at fault.
// errors.Is(err, errInvalidConfig) is true.
type configError = adapter.ConfigError

// unreachableError reports that Open could not complete a round trip with
// the cluster at Endpoints within its DialTimeout.
// errors.Is(err, store.ErrNotReachable) is true (the shared
// store.ErrUnreachable), and Err (the client's
// error) is reachable with errors.Is and errors.As too.
type unreachableError = adapter.UnreachableError

// invalid is the *configError of field.
func invalid(field, reason string) error {
	return &configError{Invalid: errInvalidConfig, Field: field, Reason: reason}
}

// unreachable is the *unreachableError of Open.
func unreachable(endpoints []string, err error) error {
	return &unreachableError{Backend: backend, Endpoints: endpoints, Err: err}
}
