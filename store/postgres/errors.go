package postgres

import (
	"errors"
	"strings"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/kv"
)

// backend names PostgreSQL in messages.
const backend = "postgres"

var (
	// ErrNoEndpoint is returned by Open for an empty DSN without
	// Endpoints (and by valkeyrie.NewStore without an endpoint). It
	// matches the shared store.ErrInvalidConfig.
	ErrNoEndpoint = adapter.Sentinel("postgres: a DSN is required as the first endpoint", lstore.ErrInvalidConfig)

	// ErrInvalidConfig is wrapped by the errors Open returns for an
	// unusable DSN or Config (bad table, schema or channel name, negative
	// durations).
	// It matches the shared store.ErrInvalidConfig.
	ErrInvalidConfig = adapter.Sentinel("postgres: invalid configuration", lstore.ErrInvalidConfig)

	// ErrChannelMismatch is returned by New and Open when the table already
	// exists and its trigger notifies on another channel than the one
	// configured, or when another table of the database notifies on the
	// configured channel. All handles on a table must use the same channel,
	// and each table its own.
	// It matches the shared store.ErrInvalidConfig.
	ErrChannelMismatch = adapter.Sentinel("postgres: the table already notifies on another channel", lstore.ErrInvalidConfig)

	// ErrInsecure is wrapped by the *ConfigError of a DSN that would send
	// a password or a client key without verified TLS (sslmode prefer,
	// pgx's default, allow, or require without sslrootcert): see
	// requireVerifiedTLS. sslmode=disable sends them in plain text on
	// purpose; verify-full (or verify-ca) verifies the server.
	// It matches the shared store.ErrInvalidConfig.
	ErrInsecure = adapter.Sentinel("postgres: credentials would be sent without verified TLS", lstore.ErrInvalidConfig)

	// ErrEmptyKey is returned when a key is empty once leading and trailing
	// slashes are trimmed.
	ErrEmptyKey = errors.New("postgres: empty key")

	// ErrClosed is returned by every method of a handle after Close.
	// errors.Is(ErrClosed, store.ErrNotReachable) is true, and so are
	// the shared store.ErrClosed and store.ErrUnreachable.
	ErrClosed = adapter.Sentinel("postgres: store handle closed: "+store.ErrNotReachable.Error(), lstore.ErrClosed, store.ErrNotReachable)

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
	return &UnreachableError{Backend: backend, Op: op, Err: err}
}

var (
	// ErrAuth is matched by the errors of a server that refused the
	// client's credentials (SQLSTATE class 28): a wrong password, a
	// missing or invalid client certificate, a certificate whose CN is not
	// the user under clientcert=verify-full, no pg_hba.conf entry (for
	// instance a plain-text connection where only hostssl is allowed).
	// The error is a *RefusedError.
	// It matches the shared store.ErrAuth.
	ErrAuth = adapter.Sentinel("authentication refused", lstore.ErrAuth)

	// ErrTLS is matched by the errors of a TLS handshake that failed: a
	// server certificate that does not verify (unknown CA, wrong host
	// name, expired), a client certificate the server refused, a server
	// without TLS when the DSN requires it. The error is a *RefusedError.
	// It matches the shared store.ErrTLS.
	ErrTLS = adapter.Sentinel("TLS handshake failed", lstore.ErrTLS)

	// ErrPermission is matched by the errors of a statement the role has
	// no privilege for (SQLSTATE 42501): a follower's role that may only
	// read writing, a role without grants on the table reading. The
	// error is a *RefusedError.
	// It matches the shared store.ErrPermission.
	ErrPermission = adapter.Sentinel("permission denied", lstore.ErrPermission)

	// ErrSchemaIncomplete is returned by New and Open when the table
	// exists but belongs to another role and misses some of the sequence,
	// functions and triggers that its owner creates: open the store once
	// as the table's owner (see "Least privilege" in the package
	// documentation). It is wrapped in a *RefusedError.
	// It matches the shared store.ErrPermission.
	ErrSchemaIncomplete = adapter.Sentinel("the schema is incomplete and owned by another role: open the store once as its owner", lstore.ErrPermission)
)

// RefusedError is a request the server, or the TLS handshake, refused:
// errors.Is(err, Kind) is true, Kind being ErrAuth, ErrTLS, ErrPermission
// or ErrSchemaIncomplete, and Err (the driver's error) is reachable with
// errors.Is and errors.As. It never matches store.ErrNotReachable: the
// server answered, and trying again will not help. Its message is one
// line and never holds the password.
type RefusedError struct {
	// Op is the call that failed ("connect", "get", ...).
	Op string
	// Kind is ErrAuth, ErrTLS, ErrPermission or ErrSchemaIncomplete.
	Kind error
	// Hint says what is probably wrong, when the driver's error does not
	// ("the server refused the client certificate"), or "".
	Hint string
	// Err is the driver's error, with the password masked.
	Err error
}

// Error describes the error: "postgres: OP: KIND[ (HINT)]: ERR".
func (e *RefusedError) Error() string {
	msg := "postgres: " + e.Op + ": " + e.Kind.Error()
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}

	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}

	return msg
}

// Unwrap returns Kind and Err.
func (e *RefusedError) Unwrap() []error { return []error{e.Kind, e.Err} }

// maskedError is an error whose text has a secret masked; Unwrap returns
// the original.
type maskedError struct {
	err  error
	text string
}

func (e *maskedError) Error() string { return e.text }
func (e *maskedError) Unwrap() error { return e.err }

// mask returns err with every occurrence of secret in its text replaced by
// "xxxxx" (err itself when there is none).
func mask(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}

	return &maskedError{err: err, text: strings.ReplaceAll(err.Error(), secret, "xxxxx")}
}
