package postgres

import (
	"strings"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// backend names PostgreSQL in messages.
const backend = "postgres"

var (
	// errNoEndpoint is returned by Open for an empty DSN (and by
	// valkeyrie.NewStore without an endpoint). It matches the shared
	// store.ErrInvalidConfig.
	errNoEndpoint = adapter.Sentinel("postgres: a DSN is required as the first endpoint", lstore.ErrInvalidConfig)

	// errInvalidConfig is wrapped by the errors Open returns for an
	// unusable DSN or Config (bad table, schema or channel name, negative
	// durations).
	// It matches the shared store.ErrInvalidConfig.
	errInvalidConfig = adapter.Sentinel("postgres: invalid configuration", lstore.ErrInvalidConfig)

	// errChannelMismatch is returned by New and Open when the table already
	// exists and its trigger notifies on another channel than the one
	// configured, or when another table of the database notifies on the
	// configured channel. All handles on a table must use the same channel,
	// and each table its own.
	// It matches the shared store.ErrInvalidConfig.
	errChannelMismatch = adapter.Sentinel("postgres: the table already notifies on another channel", lstore.ErrInvalidConfig)

	// errInsecure is wrapped by the *configError of a DSN that would send
	// a password or a client key without verified TLS (sslmode prefer,
	// pgx's default, allow, or require without sslrootcert): see
	// requireVerifiedTLS. sslmode=disable sends them in plain text on
	// purpose; verify-full (or verify-ca) verifies the server.
	// It matches the shared store.ErrInvalidConfig.
	errInsecure = adapter.Sentinel("postgres: credentials would be sent without verified TLS", lstore.ErrInvalidConfig)

	// errEmptyKey is returned when a key is empty once leading and trailing
	// slashes are trimmed.
	errEmptyKey = adapter.Sentinel("postgres: empty key", lstore.ErrInvalidKey)

	// errClosed is returned by every method of a handle after Close.
	// errors.Is(errClosed, store.ErrNotReachable) is true, and so are
	// the shared store.ErrClosed and store.ErrUnreachable.
	errClosed = adapter.Sentinel("postgres: store handle closed: "+store.ErrNotReachable.Error(), lstore.ErrClosed, store.ErrNotReachable)

	// errNotLocked is returned by Unlock when the Locker does not hold the
	// lock (never acquired, already released, or lost). It is the same
	// error as memory.ErrNotLocked.
	errNotLocked = lstore.ErrNotLocked

	// errAlreadyLocked is returned by Lock when the same Locker already holds
	// the lock. Locks are not reentrant. It is the same error as
	// memory.ErrAlreadyLocked.
	errAlreadyLocked = lstore.ErrAlreadyLocked
)

// unreachableError reports that the server could not be reached, or that
// the connection broke, during Op. errors.Is(err, store.ErrNotReachable) is
// true, and Err (the driver's error) is reachable with errors.Is and
// errors.As too.
type unreachableError = adapter.UnreachableError

// configError is an unusable DSN or Config, returned by New and Open
// before any statement: Field names the Config field at fault ("DSN" for
// the DSN). errors.Is(err, errInvalidConfig) is true.
type configError = adapter.ConfigError

// invalid is the *configError of field.
func invalid(field, value, reason string, err error) error {
	return &configError{Invalid: errInvalidConfig, Field: field, Value: value, Reason: reason, Err: err}
}

// unreachable is the *unreachableError of op.
func unreachable(op string, err error) error {
	return &unreachableError{Backend: backend, Op: op, Err: err}
}

var (
	// errAuth is matched by the errors of a server that refused the
	// client's credentials (SQLSTATE class 28): a wrong password, a
	// missing or invalid client certificate, a certificate whose CN is not
	// the user under clientcert=verify-full, no pg_hba.conf entry (for
	// instance a plain-text connection where only hostssl is allowed).
	// The error is a *RefusedError.
	// It matches the shared store.ErrAuth.
	errAuth = adapter.Sentinel("authentication refused", lstore.ErrAuth)

	// errTLS is matched by the errors of a TLS handshake that failed: a
	// server certificate that does not verify (unknown CA, wrong host
	// name, expired), a client certificate the server refused, a server
	// without TLS when the DSN requires it. The error is a *RefusedError.
	// It matches the shared store.ErrTLS.
	errTLS = adapter.Sentinel("TLS handshake failed", lstore.ErrTLS)

	// errPermission is matched by the errors of a statement the role has
	// no privilege for (SQLSTATE 42501): a follower's role that may only
	// read writing, a role without grants on the table reading. The
	// error is a *RefusedError.
	// It matches the shared store.ErrPermission.
	errPermission = adapter.Sentinel("permission denied", lstore.ErrPermission)

	// errSchemaIncomplete is returned by New and Open when the table
	// exists but belongs to another role and misses some of the sequence,
	// functions and triggers that its owner creates: open the store once
	// as the table's owner (see "Least privilege" in the package
	// documentation). It is wrapped in a *RefusedError.
	// It matches the shared store.ErrPermission.
	errSchemaIncomplete = adapter.Sentinel("the schema is incomplete and owned by another role: open the store once as its owner", lstore.ErrPermission)
)

// RefusedError is a request the server, or the TLS handshake, refused:
// errors.Is(err, Kind) is true, Kind being errAuth, errTLS, errPermission
// or errSchemaIncomplete, and Err (the driver's error) is reachable with
// errors.Is and errors.As. It never matches store.ErrNotReachable: the
// server answered, and trying again will not help. Its message is one
// line and never holds the password.
type RefusedError struct {
	// Op is the call that failed ("connect", "get", ...).
	Op string
	// Kind is errAuth, errTLS, errPermission or errSchemaIncomplete.
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
