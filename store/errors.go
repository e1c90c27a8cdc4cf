package store

import (
	"errors"

	vstore "github.com/kvtools/valkeyrie/store"
)

var (
	// ErrAuth is matched by every adapter's error for credentials the
	// server refused: a wrong user name, password or token (etcd's
	// ErrAuthFailed, Consul's ErrTokenNotFound, ZooKeeper's ErrAuthFailed,
	// PostgreSQL's ErrAuth, Redis's WRONGPASS).
	ErrAuth = errors.New("store: authentication refused")
	// ErrPermission is matched by every adapter's error for a call the
	// server refused to authenticated credentials that lack the right
	// (etcd's and Consul's ErrPermissionDenied, ZooKeeper's and
	// PostgreSQL's ErrPermission, Redis's NOPERM).
	ErrPermission = errors.New("store: permission denied")
	// ErrTLS is matched by every adapter's error for a failed TLS
	// handshake: an untrusted server certificate, a client certificate the
	// server refused, or TLS spoken to a plain server or the other way
	// round.
	ErrTLS = errors.New("store: TLS failure")
	// ErrInvalidConfig is matched by every adapter's error for an unusable
	// Config (its *ConfigError, ErrInvalidConfig and the like), reported
	// before any network activity.
	ErrInvalidConfig = errors.New("store: invalid configuration")
	// ErrUnreachable is valkeyrie's store.ErrNotReachable under this
	// vocabulary's name: the servers could not be reached or did not
	// answer in time (every adapter's *UnreachableError, and the errors of
	// calls abandoned at their deadline). Being the same value, every error
	// that matches one matches the other.
	ErrUnreachable = vstore.ErrNotReachable
	// ErrClosed is matched by an adapter's error for a call on a handle
	// after its Close, where the adapter can tell (memory, Consul,
	// ZooKeeper, PostgreSQL, Kubernetes; the etcd and Redis clients answer
	// such a call with their own connection errors, which match
	// ErrUnreachable or nothing). Such errors also match ErrUnreachable.
	ErrClosed = errors.New("store: handle closed")
)
