package postgres

import (
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/kv"
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
	// lock (never acquired, already released, or lost). It is the same
	// error as memory.ErrNotLocked.
	ErrNotLocked = kv.ErrNotLocked

	// ErrAlreadyLocked is returned by Lock when the same Locker already holds
	// the lock. Locks are not reentrant. It is the same error as
	// memory.ErrAlreadyLocked.
	ErrAlreadyLocked = kv.ErrAlreadyLocked
)

// UnreachableError reports that the server could not be reached, or that
// the connection broke, during Op. errors.Is(err, store.ErrNotReachable) is
// true, and Err (the driver's error) is reachable with errors.Is and
// errors.As too.
type UnreachableError = adapter.UnreachableError

// ConfigError is an unusable DSN or Config, returned by New and Open
// before any statement: Field names the Config field at fault ("DSN" for
// the DSN). errors.Is(err, ErrInvalidConfig) is true.
type ConfigError = adapter.ConfigError

// invalid is the *ConfigError of field.
func invalid(field, value, reason string, err error) error {
	return &ConfigError{Invalid: ErrInvalidConfig, Field: field, Value: value, Reason: reason, Err: err}
}

// unreachable is the *UnreachableError of op.
func unreachable(op string, err error) error {
	return &UnreachableError{Backend: "postgres", Op: op, Err: err}
}
