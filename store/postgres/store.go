package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/watch"

	"github.com/leadership-go/leadership/store/internal/kv"
)

// Store is one client handle on a table: a connection pool, one listener
// connection and an owner id under which it keeps its TTL'd keys and locks
// alive. It implements store.Store and is safe for concurrent use.
type Store struct {
	st      settings
	n       names
	q       queries
	pool    *pgxpool.Pool
	connCfg *pgx.ConnConfig // for the listener connection
	id      string          // owner id of the rows this handle keeps alive

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{} // wakes the keeper after a schedule change

	reads, cases, creates *batcher // single-key reads and atomic writes, batched

	mu          sync.Mutex
	closed      bool
	hbAt        time.Time     // next heartbeat, zero if nothing to keep alive
	hbTTL       time.Duration // smallest TTL kept alive, as last known
	purgeAt     time.Time     // next purge of expired rows
	keyWatches  map[string]map[*keyWatch]struct{}
	treeWatches map[*treeWatch]struct{}
	waiters     kv.Waiters // closed at the next event on the key
	held        map[string]map[*heldLock]struct{}
	heldByID    map[string]*heldLock
	listenerPID uint32
	repair      *schemaRepair // the last re-creation of the schema, if any

	repaired atomic.Int64 // schema re-creations that succeeded (for tests)

	// beforeReconnect, if set (by tests), runs before the listener
	// reconnects.
	beforeReconnect func()
}

var _ store.Store = (*Store)(nil)

// Open connects to the server at cfg.DSN, creates the schema if needed,
// starts listening and returns the handle. It fails within
// cfg.DialTimeout (default 5s) with an error wrapping
// store.ErrNotReachable (an error matching store.ErrUnreachable) when the server cannot be
// reached, at once with an error matching store.ErrInvalidConfig for an empty DSN, and with a
// *store.ConfigError for an unusable DSN or Config.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	return open(ctx, string(cfg.DSN), &cfg)
}

// open is Open on dsn.
func open(ctx context.Context, dsn string, cfg *Config) (*Store, error) {
	if dsn == "" {
		return nil, errNoEndpoint
	}

	st, err := cfg.resolve()
	if err != nil {
		return nil, err
	}

	pc, err := cfg.poolConfig(dsn, &st)
	if err != nil {
		return nil, err
	}

	if err := ctx.Err(); err != nil {
		return nil, err
	}

	connCfg := pc.ConnConfig.Copy()

	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, invalid("DSN", "", "unusable", err)
	}

	sctx, cancel := context.WithCancel(context.Background())
	s := &Store{
		st:          st,
		pool:        pool,
		connCfg:     connCfg,
		id:          newID(),
		ctx:         sctx,
		cancel:      cancel,
		kick:        make(chan struct{}, 1),
		keyWatches:  make(map[string]map[*keyWatch]struct{}),
		treeWatches: make(map[*treeWatch]struct{}),
		waiters:     kv.Waiters{},
		held:        make(map[string]map[*heldLock]struct{}),
		heldByID:    make(map[string]*heldLock),
	}

	s.reads, s.cases, s.creates = newReadBatcher(s), newCASBatcher(s), newCreateBatcher(s)

	conn, err := s.setup(ctx)
	if err != nil {
		cancel()
		pool.Close()

		return nil, err
	}

	s.wg.Add(2)
	go s.listen(conn)
	go s.keep()

	return s, nil
}

// setup pings the server, creates the schema, warms the pool (and purges
// what expired while nobody watched) and opens the listener.
func (s *Store) setup(ctx context.Context) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, s.st.connectTimeout)
	defer cancel()

	if err := s.pool.Ping(cctx); err != nil {
		return nil, s.openErr(ctx, cctx, "connect", err)
	}

	if s.st.schema == "" {
		if err := s.pool.QueryRow(cctx, "SELECT current_schema()").Scan(&s.st.schema); err != nil {
			return nil, s.openErr(ctx, cctx, "current_schema", err)
		}

		if err := validateName("schema", s.st.schema, maxNameLen); err != nil {
			return nil, err
		}
	}

	s.n = newNames(s.st.schema, s.st.table)
	s.q = newQueries(s.n)

	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return ensureSchema(ctx, tx, s.n, s.st.channel)
	})
	if err != nil {
		if errors.Is(err, errChannelMismatch) {
			return nil, err
		}

		return nil, s.openErr(ctx, ctx, "create schema", err)
	}

	if err := s.warm(cctx); err != nil {
		return nil, s.openErr(ctx, cctx, "warm up", err)
	}

	conn, err := s.connectListener(cctx)
	if err != nil {
		return nil, s.openErr(ctx, cctx, "listen", err)
	}

	return conn, nil
}

// openErr maps the error of op during Open, ctx being Open's context and
// cctx the one op ran with: the caller's cancellation as it is, else err
// classified, after a probe for the server's refusal of the client
// certificate that a reset can hide (certVerdict, within cctx).
func (s *Store) openErr(ctx, cctx context.Context, op string, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}

	return s.classify(op, certVerdict(cctx, &s.connCfg.Config, err))
}

// classify wraps a driver error, its password masked: a refusal (TLS,
// authentication, privilege) becomes a *RefusedError, other
// connection-level failures an error matching store.ErrUnreachable, and the other errors
// reported by the server stay as they are.
func (s *Store) classify(op string, err error) error {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return err
	}

	err = mask(err, s.connCfg.Password)

	if kind, hint := refusal(err, s.connCfg); kind != nil {
		return &RefusedError{Op: op, Kind: kind, Hint: hint, Err: err}
	}

	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && !connectionClass(pgErr.Code) {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}

	return unreachable(op, err)
}

// refusal returns the kind of refusal err is (errAuth, errTLS,
// errPermission), with a hint when the driver's message does not say what
// is wrong, or nil.
func refusal(err error, cc *pgx.ConnConfig) (kind error, hint string) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "42501":
			return errPermission, ""
		case strings.HasPrefix(pgErr.Code, "28"):
			if cn := clientCN(cc); pgErr.Code == "28P01" && cn != "" && cn != cc.User {
				hint = fmt.Sprintf("the client certificate's CN %q is not the user %q, which clientcert=verify-full requires", cn, cc.User)
			}

			return errAuth, hint
		}

		return nil, ""
	}

	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)

	switch {
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid):
		return errTLS, "the server's certificate does not verify"
	case adapter.RemoteAlert(err) != nil:
		// An alert from the server during the handshake: about the client
		// certificate when it presented one.
		if presentsClientCert(cc.TLSConfig) {
			return errTLS, "the server refused the client certificate"
		}

		return errTLS, ""
	case strings.Contains(err.Error(), "server refused TLS connection"): // pgconn's errTLSRefused, unexported
		return errTLS, "the server does not speak TLS: sslmode asks for it"
	}

	return nil, ""
}

// clientCN is the CN of the client certificate cc presents, or "".
func clientCN(cc *pgx.ConnConfig) string {
	if cc == nil || cc.TLSConfig == nil || len(cc.TLSConfig.Certificates) == 0 {
		return ""
	}

	c := cc.TLSConfig.Certificates[0]
	if c.Leaf == nil {
		if len(c.Certificate) == 0 {
			return ""
		}

		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			return ""
		}

		return leaf.Subject.CommonName
	}

	return c.Leaf.Subject.CommonName
}

// connectionClass reports SQLSTATEs meaning the server is, or is becoming,
// unavailable: connection exceptions, shutdowns, too many connections.
func connectionClass(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "53300":
		return true
	}

	return len(code) >= 2 && code[:2] == "08"
}

// MinTTL returns the smallest TTL the store honours. Smaller positive TTLs
// are rounded up to it.
func (s *Store) MinTTL() time.Duration {
	return minTTL
}

// Table returns the schema-qualified, quoted name of the table.
func (s *Store) Table() string {
	return s.n.table
}

// Channel returns the NOTIFY channel.
func (s *Store) Channel() string {
	return s.st.channel
}

// begin checks ctx and the handle and returns a context for one call,
// canceled as well when the handle closes.
func (s *Store) begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}

	if s.ctx.Err() != nil {
		return nil, nil, errClosed
	}

	c, cancel := watch.Joined(ctx, s.ctx)

	return c, cancel, nil
}

// beginCall is begin for one call of the store: bounded by
// RequestTimeout when ctx has no deadline.
func (s *Store) beginCall(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if _, ok := ctx.Deadline(); ok || s.st.requestTimeout <= 0 {
		return s.begin(ctx)
	}
	bctx, cancel := context.WithTimeout(ctx, s.st.requestTimeout)
	c, done, err := s.begin(bctx)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return c, func() { done(); cancel() }, nil
}

// beginKey is beginCall preceded by key normalisation.
func (s *Store) beginKey(ctx context.Context, key string) (string, context.Context, context.CancelFunc, error) {
	k := kv.NormalizeKey(key)
	if k == "" {
		return "", nil, nil, errEmptyKey
	}

	c, done, err := s.beginCall(ctx)

	return k, c, done, err
}

// fail maps the error of a call made with ctx.
func (s *Store) fail(ctx context.Context, op string, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}

	if s.ctx.Err() != nil {
		return errClosed
	}

	return s.classify(op, err)
}

// spawn runs f in a goroutine Close waits for, unless the handle is closed.
func (s *Store) spawn(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()

	return s.spawnLocked(f)
}

// spawnLocked is spawn with s.mu held.
func (s *Store) spawnLocked(f func()) bool {
	if s.closed {
		return false
	}

	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()

	return true
}

// Close detaches the handle as if the client vanished: heartbeats stop, its
// watch channels close, blocked calls return an error matching store.ErrClosed, and the keys and
// locks it kept alive expire one TTL after their last renewal (their lost
// channels close then). Every later call returns an error matching store.ErrClosed. Close is
// idempotent and waits for the handle's goroutines to end. (It interrupts
// the queries in flight; pgxpool may then keep a goroutine of its own for
// up to 500ms.)
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()

		return nil
	}

	s.closed = true
	s.cancel()
	s.mu.Unlock()

	s.wg.Wait()
	s.pool.Close()

	return nil
}
