package postgres

import (
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"
)

var (
	// ErrNoEndpoint is returned by New when no endpoint (DSN) is given, and
	// by Open for an empty DSN.
	ErrNoEndpoint = errors.New("postgres: a DSN is required as the first endpoint")

	// ErrInvalidConfig is wrapped by the errors New and Open return for an
	// unusable DSN or Config (bad table, schema or channel name, negative
	// durations).
	ErrInvalidConfig = errors.New("postgres: invalid configuration")

	// ErrChannelMismatch is returned by New and Open when the table already
	// exists and its trigger notifies on another channel than the one
	// configured, or when another table of the database notifies on the
	// configured channel. All handles on a table must use the same channel,
	// and each table its own.
	ErrChannelMismatch = errors.New("postgres: the table already notifies on another channel")

	// ErrEmptyKey is returned when a key is empty once leading and trailing
	// slashes are trimmed.
	ErrEmptyKey = errors.New("postgres: empty key")

	// ErrClosed is returned by every method of a handle after Close.
	// errors.Is(ErrClosed, store.ErrNotReachable) is true.
	ErrClosed = fmt.Errorf("postgres: store handle closed: %w", store.ErrNotReachable)

	// ErrNotLocked is returned by Unlock when the Locker does not hold the
	// lock (never acquired, already released, or lost).
	ErrNotLocked = errors.New("postgres: lock not held")

	// ErrAlreadyLocked is returned by Lock when the same Locker already holds
	// the lock. Locks are not reentrant.
	ErrAlreadyLocked = errors.New("postgres: lock already held by this locker")
)

// UnreachableError reports that the server could not be reached, or that
// the connection broke, during Op. errors.Is(err, store.ErrNotReachable) is
// true, and Err (the driver's error) is reachable with errors.Is and
// errors.As too.
type UnreachableError struct {
	Op  string
	Err error
}

// Error describes the error.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("postgres: %s: server not reachable: %v", e.Op, e.Err)
}

// Unwrap returns store.ErrNotReachable and the underlying error.
func (e *UnreachableError) Unwrap() []error {
	return []error{store.ErrNotReachable, e.Err}
}
