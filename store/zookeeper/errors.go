package zookeeper

import (
	"errors"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// backend names ZooKeeper in messages.
const backend = "zookeeper"

var (
	// errInvalidConfig is wrapped by the errors Open returns for an unusable
	// Config. It matches the shared store.ErrInvalidConfig.
	errInvalidConfig = adapter.Sentinel("zookeeper: invalid configuration", lstore.ErrInvalidConfig)

	// errEmptyKey is returned for a key that is empty once its slashes are
	// trimmed: the root node is not a key.
	errEmptyKey = adapter.Sentinel("zookeeper: empty key", lstore.ErrInvalidKey)

	// errClosed is returned by calls on a closed store.
	// errors.Is(errClosed, store.ErrNotReachable) is true, and so are
	// the shared store.ErrClosed and store.ErrUnreachable.
	errClosed = adapter.Sentinel("zookeeper: store closed: "+store.ErrNotReachable.Error(), lstore.ErrClosed, store.ErrNotReachable)

	// errPermission is matched by every *AccessError: ZooKeeper refused a
	// call because the session's identity lacks a right on a node (see
	// AccessError). It matches the shared store.ErrPermission.
	errPermission = adapter.Sentinel("zookeeper: permission denied", lstore.ErrPermission)

	// errAuthFailed is matched by an *AccessError that shows a wrong
	// digest password, and by Open's error when the ensemble refused the
	// credentials (zk.ErrAuthFailed). It matches the shared store.ErrAuth.
	errAuthFailed = adapter.Sentinel("zookeeper: authentication failed", lstore.ErrAuth)
)

// unreachableError reports that no ZooKeeper server of Endpoints answered
// during Op, or that the connection broke during it (a write's outcome is
// then unknown). errors.Is(err, store.ErrNotReachable) is true, and Err (the
// client's or the context's error) is reachable with errors.Is and
// errors.As too.
type unreachableError = adapter.UnreachableError

// configError is an unusable Config, returned by Open before any network
// activity: Field names the Config field at fault.
// errors.Is(err, errInvalidConfig) is true.
type configError = adapter.ConfigError

// invalid is the *configError of field.
func invalid(field, reason string) error {
	return &configError{Invalid: errInvalidConfig, Field: field, Reason: reason}
}

// unreachable is the *unreachableError of op.
func unreachable(op string, endpoints []string, err error) error {
	return &unreachableError{Backend: backend, Op: op, Endpoints: endpoints, Err: err}
}

// isConnErr reports whether err is the client losing or lacking its
// connection or session, rather than an answer of the server.
func isConnErr(err error) bool {
	for _, target := range []error{zk.ErrNoServer, zk.ErrConnectionClosed, zk.ErrClosing, zk.ErrSessionExpired, zk.ErrSessionMoved} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
