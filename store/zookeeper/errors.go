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
	// ErrInvalidConfig is wrapped by the errors Open returns for an unusable
	// Config. It matches the shared store.ErrInvalidConfig.
	ErrInvalidConfig = adapter.Sentinel("zookeeper: invalid configuration", lstore.ErrInvalidConfig)

	// ErrEmptyKey is returned for a key that is empty once its slashes are
	// trimmed: the root node is not a key.
	ErrEmptyKey = errors.New("zookeeper: empty key")

	// ErrClosed is returned by calls on a closed store.
	// errors.Is(ErrClosed, store.ErrNotReachable) is true, and so are
	// the shared store.ErrClosed and store.ErrUnreachable.
	ErrClosed = adapter.Sentinel("zookeeper: store closed: "+store.ErrNotReachable.Error(), lstore.ErrClosed, store.ErrNotReachable)

	// ErrPermission is matched by every *AccessError: ZooKeeper refused a
	// call because the session's identity lacks a right on a node (see
	// AccessError). It matches the shared store.ErrPermission.
	ErrPermission = adapter.Sentinel("zookeeper: permission denied", lstore.ErrPermission)

	// ErrAuthFailed is matched by an *AccessError that shows a wrong
	// digest password, and by Open's error when the ensemble refused the
	// credentials (zk.ErrAuthFailed). It matches the shared store.ErrAuth.
	ErrAuthFailed = adapter.Sentinel("zookeeper: authentication failed", lstore.ErrAuth)
)

// UnreachableError reports that no ZooKeeper server of Endpoints answered
// during Op, or that the connection broke during it (a write's outcome is
// then unknown). errors.Is(err, store.ErrNotReachable) is true, and Err (the
// client's or the context's error) is reachable with errors.Is and
// errors.As too.
type UnreachableError = adapter.UnreachableError

// ConfigError is an unusable Config, returned by Open before any network
// activity: Field names the Config field at fault.
// errors.Is(err, ErrInvalidConfig) is true.
type ConfigError = adapter.ConfigError

// invalid is the *ConfigError of field.
func invalid(field, reason string) error {
	return &ConfigError{Invalid: ErrInvalidConfig, Field: field, Reason: reason}
}

// unreachable is the *UnreachableError of op.
func unreachable(op string, endpoints []string, err error) error {
	return &UnreachableError{Backend: backend, Op: op, Endpoints: endpoints, Err: err}
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
