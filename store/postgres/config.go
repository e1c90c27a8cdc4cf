package postgres

import (
	"crypto/tls"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

const (
	// defaultTable is the table used when Config.Table is empty.
	defaultTable = "leadership_kv"

	// defaultDialTimeout bounds connection attempts and the initial ping
	// when neither Config.DialTimeout nor the DSN's connect_timeout is set.
	defaultDialTimeout = adapter.DefaultDialTimeout

	// defaultLockTTL is the lock TTL used when LockOptions.TTL is not positive.
	defaultLockTTL = 15 * time.Second

	// minTTL is the smallest TTL honoured; smaller positive TTLs are rounded
	// up to it. Kept-alive rows are renewed every TTL/3.
	minTTL = 100 * time.Millisecond

	// maxTableLen leaves room for the suffixes of the derived object names
	// within PostgreSQL's 63-byte identifier limit.
	maxTableLen = 54
	maxNameLen  = 63
)

// Config is the configuration accepted by Open and by valkeyrie.NewStore
// under StoreName. DSN says where the servers are; every other field may
// be left zero for its default (valkeyrie.NewStore also takes a nil
// *Config).
type Config struct {
	// DSN is the PostgreSQL URL or key/value DSN that Open connects to, as
	// pgx takes it ("postgres://user:pass@host:5432/db?sslmode=verify-full&sslrootcert=CA",
	// several hosts as "host1:5432,host2:5432", tried in order). A
	// password or client key is never sent without verified TLS unless it
	// says sslmode=disable (else a *store.ConfigError for sslmode).
	// valkeyrie.NewStore takes its first endpoint in its place when given
	// one. DSN is a store.Secret (it may hold a password): fmt, JSON and
	// slog show it masked whole.
	DSN lstore.Secret

	// Username and Password, when set, replace the DSN's user and password.
	Username string
	// Password is a store.Secret: fmt, JSON and slog show it masked.
	Password lstore.Secret

	// Table is the table holding the keys, created if missing. Default
	// "leadership_kv". Letters, digits and underscores, at most 54 bytes.
	Table string

	// Schema holds the table, its sequence, functions and trigger. Default:
	// the connection's current_schema().
	Schema string

	// Channel is the NOTIFY channel. Default: Table + "_events". Every
	// handle on a table must use the same channel (else Open fails with an error matching store.ErrInvalidConfig).
	Channel string

	// DialTimeout bounds each connection attempt and the ping done by
	// Open, and how long a statement may run on after its caller gave up
	// (see Load in the package documentation). Default: the DSN's
	// connect_timeout, else 5s.
	DialTimeout time.Duration

	// RequestTimeout, when positive, bounds every call whose context has
	// no deadline. Default: none, as every call but Watch's first read is
	// one round trip bounded by its context.
	RequestTimeout time.Duration

	// TLS, when set, replaces the TLS configuration derived from the DSN
	// for every host the DSN names (the DSN's non-TLS fallbacks are
	// dropped; its other hosts are kept, each tried with TLS).
	TLS *tls.Config

	// MaxConns caps the handle's connection pool (the listener connection
	// is extra). Default: pgxpool's (the DSN's pool_max_conns, else
	// max(4, NumCPU)).
	MaxConns int32
}

var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// settings is a validated Config.
type settings struct {
	table, schema, channel string
	connectTimeout         time.Duration
	requestTimeout         time.Duration
}

// validateName checks an identifier used to derive SQL object names:
// field is the Config field that gives it.
func validateName(field, name string, maxLen int) error {
	if len(name) > maxLen || !identPattern.MatchString(name) {
		return invalid(field, name, fmt.Sprintf("want letters, digits and underscores, at most %d bytes", maxLen), nil)
	}

	return nil
}

// resolve validates c and fills in the defaults that do not need a
// connection (the schema default does).
func (c *Config) resolve() (settings, error) {
	var cfg Config
	if c != nil {
		cfg = *c
	}

	st := settings{table: cfg.Table, schema: cfg.Schema, channel: cfg.Channel, connectTimeout: cfg.DialTimeout, requestTimeout: cfg.RequestTimeout}
	if st.table == "" {
		st.table = defaultTable
	}

	if st.channel == "" {
		st.channel = st.table + "_events"
	}

	if err := validateName("Table", st.table, maxTableLen); err != nil {
		return st, err
	}

	if err := validateName("Channel", st.channel, maxNameLen); err != nil {
		return st, err
	}

	if st.schema != "" {
		if err := validateName("Schema", st.schema, maxNameLen); err != nil {
			return st, err
		}
	}

	if cfg.DialTimeout < 0 {
		return st, invalid("DialTimeout", "", fmt.Sprintf("negative: %v", cfg.DialTimeout), nil)
	}
	if cfg.RequestTimeout < 0 {
		return st, invalid("RequestTimeout", "", fmt.Sprintf("negative: %v", cfg.RequestTimeout), nil)
	}
	if cfg.MaxConns < 0 {
		return st, invalid("MaxConns", "", fmt.Sprintf("negative: %d", cfg.MaxConns), nil)
	}

	return st, nil
}

// poolConfig parses dsn and applies c to it.
func (c *Config) poolConfig(dsn string, st *settings) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, invalid("DSN", "", "cannot be parsed: "+parseReason(err), nil)
	}

	cc := pc.ConnConfig

	switch {
	case st.connectTimeout > 0:
		cc.ConnectTimeout = st.connectTimeout
	case cc.ConnectTimeout > 0:
		st.connectTimeout = cc.ConnectTimeout
	default:
		st.connectTimeout = defaultDialTimeout
		cc.ConnectTimeout = defaultDialTimeout
	}

	if c != nil {
		c.override(cc)
	}

	if c != nil && c.TLS != nil {
		cc.TLSConfig = tlsFor(c.TLS, cc.Host)
		cc.Fallbacks = withTLS(cc, c.TLS)
	} else if err := requireVerifiedTLS(cc); err != nil {
		return nil, err
	}

	if c != nil && c.MaxConns > 0 {
		pc.MaxConns = c.MaxConns
	}

	return pc, nil
}

// withTLS returns cc's fallback hosts, each once and with t (tlsFor the
// host) as its TLS configuration; the primary host is not among them. pgx lists a
// host twice for sslmode=prefer or allow (with TLS and without).
func withTLS(cc *pgx.ConnConfig, t *tls.Config) []*pgconn.FallbackConfig {
	type hostPort struct {
		host string
		port uint16
	}
	seen := map[hostPort]bool{{cc.Host, cc.Port}: true}
	var out []*pgconn.FallbackConfig
	for _, f := range cc.Fallbacks {
		hp := hostPort{f.Host, f.Port}
		if seen[hp] {
			continue
		}
		seen[hp] = true
		out = append(out, &pgconn.FallbackConfig{Host: f.Host, Port: f.Port, TLSConfig: tlsFor(t, f.Host)})
	}
	return out
}

// tlsFor returns a clone of t for host: with host as its ServerName when t
// names none, as pgx does for the TLS settings it derives from a DSN.
func tlsFor(t *tls.Config, host string) *tls.Config {
	c := t.Clone()
	if c.ServerName == "" && !strings.HasPrefix(host, "/") {
		c.ServerName = host
	}
	return c
}

// override puts c's Username and Password in cc, in place of the DSN's.
func (c *Config) override(cc *pgx.ConnConfig) {
	if c.Username != "" {
		cc.User = c.Username
	}
	if c.Password != "" {
		cc.Password = string(c.Password)
	}
}

// parseReason is why pgx could not parse a DSN, without the DSN: pgx's
// message quotes it (with only a URL's password masked, not sslpassword,
// and not at all when the URL does not parse), and the errors it wraps
// (net/url's) quote the URL or the part that failed, which may be part of
// a password holding an unescaped "/" or "?".
func parseReason(err error) string {
	var pe *pgconn.ParseConfigError
	if !errors.As(err, &pe) {
		return "not a PostgreSQL URL or key/value DSN"
	}

	msg := pe.Error()
	if inner := errors.Unwrap(pe); inner != nil {
		msg = strings.TrimSuffix(msg, " ("+inner.Error()+")")
	}

	if i := strings.LastIndex(msg, "`: "); i >= 0 {
		msg = msg[i+3:]
	} else {
		msg = "malformed"
	}

	if strings.HasPrefix(msg, "failed to configure TLS") {
		if inner := errors.Unwrap(pe); inner != nil {
			msg += ": " + inner.Error() // about the sslmode and the files, not their secrets
		}
	}

	return msg
}

// requireVerifiedTLS refuses a DSN that would send a password or a client
// certificate without a verified TLS connection: sslmode prefer (pgx's
// default when the DSN names none) and allow, which fall back to plain
// text when the server declines TLS, and require without sslrootcert,
// which accepts any certificate. Plain text asked for explicitly
// (sslmode=disable) and Unix sockets are allowed, as are verify-ca,
// verify-full and require with sslrootcert (verify-ca, as libpq does).
func requireVerifiedTLS(cc *pgx.ConnConfig) error {
	all := append([]*pgconn.FallbackConfig{{Host: cc.Host, Port: cc.Port, TLSConfig: cc.TLSConfig}}, cc.Fallbacks...)

	secret := cc.Password != ""
	for _, f := range all {
		if t := f.TLSConfig; t != nil && (len(t.Certificates) > 0 || t.GetClientCertificate != nil) {
			secret = true
		}
	}

	if !secret {
		return nil
	}

	var plain, unverified, verified bool

	for _, f := range all {
		switch t := f.TLSConfig; {
		case strings.HasPrefix(f.Host, "/"):
			// a Unix socket: never TLS, never on the network
		case t == nil:
			plain = true
		case t.InsecureSkipVerify && t.VerifyPeerCertificate == nil && t.VerifyConnection == nil:
			unverified = true
		default:
			verified = true
		}
	}

	if !unverified && !(plain && verified) {
		return nil // verified TLS only, or plain text only (sslmode=disable)
	}

	return invalid("sslmode", "", "would send the password or client key without verified TLS (sslmode prefer, allow, or require without "+
		"sslrootcert, which is pgx's default when none is given): use sslmode=verify-full with sslrootcert=CA "+
		"(or verify-ca), or sslmode=disable to send them in plain text on purpose", errInsecure)
}
