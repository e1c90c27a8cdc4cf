package store

import (
	"errors"
	"fmt"

	vstore "github.com/kvtools/valkeyrie/store"
)

var (
	// ErrAuth is matched by every adapter's error for credentials the
	// server refused: a wrong user name, password or token (etcd's
	// "authentication failed", Consul's "ACL not found", ZooKeeper's
	// auth failure or wrong digest password, PostgreSQL's SQLSTATE class
	// 28, Redis's WRONGPASS and NOAUTH, Kubernetes' 401).
	ErrAuth = errors.New("store: authentication refused")
	// ErrPermission is matched by every adapter's error for a call the
	// server refused to authenticated credentials that lack the right
	// (etcd's and Consul's "permission denied", ZooKeeper's NoAuth,
	// PostgreSQL's SQLSTATE 42501 and a schema owned by another role,
	// Redis's NOPERM, Kubernetes' 403).
	ErrPermission = errors.New("store: permission denied")
	// ErrTLS is matched by every adapter's error for a failed TLS
	// handshake: an untrusted server certificate, a client certificate the
	// server refused, or TLS spoken to a plain server or the other way
	// round.
	ErrTLS = errors.New("store: TLS failure")
	// ErrInvalidConfig is matched by every adapter's error for an unusable
	// Config (a *ConfigError, or a conflict found on opening such as
	// PostgreSQL's channel already used by another table), reported
	// before any write.
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
	// ErrInvalidKey is matched by an adapter's error for a key it cannot
	// store: empty once its slashes are trimmed (memory, Consul,
	// ZooKeeper, PostgreSQL), or with no Lease name (Kubernetes). It is
	// not the root package's leadership.ErrEmptyKey, the engine's check of
	// an election key before any store call.
	ErrInvalidKey = errors.New("store: invalid key")
	// ErrAlreadyLocked is matched by the error of a Locker's Lock when
	// that Locker already holds the lock: locks are not reentrant.
	ErrAlreadyLocked = errors.New("store: lock already held by this locker")
	// ErrNotLocked is matched by the error of a Locker's Unlock when that
	// Locker does not hold the lock (never acquired, released, or lost).
	ErrNotLocked = errors.New("store: lock not held")
)

// ConfigError is an unusable configuration, reported by an adapter's Open
// before any network activity. It names the field at fault and, unless it
// is a secret, the offending value. errors.Is(err, ErrInvalidConfig) is
// true, and so is errors.Is(err, Invalid); Err, when set, is reachable
// with errors.Is and errors.As too.
type ConfigError struct {
	// Invalid is the reporting adapter's error (such as "etcd: invalid
	// configuration"), or nil; its text starts the message.
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

// Error describes the error: "INVALID: FIELD[ "VALUE"]: REASON[: ERR]".
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

// Is reports whether target is ErrInvalidConfig, or Invalid is or matches
// target.
func (e *ConfigError) Is(target error) bool {
	return target == ErrInvalidConfig || e.Invalid != nil && errors.Is(e.Invalid, target)
}

// Unwrap returns the underlying error, if any.
func (e *ConfigError) Unwrap() error { return e.Err }
