package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	kvredis "github.com/kvtools/redis"
	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
	goredis "github.com/redis/go-redis/v9"
)

const (
	// Scheme names this backend, as in redis://host:port.
	Scheme = "redis"

	// DefaultDialTimeout is Config.DialTimeout's default.
	DefaultDialTimeout = adapter.DefaultDialTimeout

	// DefaultRequestTimeout is Config.RequestTimeout's default.
	DefaultRequestTimeout = adapter.DefaultRequestTimeout
)

// Config of a Redis store for elections. Zero values take documented
// defaults; the zero Config is invalid only for lack of an endpoint.
type Config struct {
	// Endpoints holds the address of the one Redis server, host:port.
	// kvtools' store takes exactly one: no Cluster, and no Sentinel here
	// (see the package documentation).
	Endpoints []string

	// Username and Password authenticate (AUTH, or an ACL user with
	// Username). Password alone is the legacy requirepass.
	Username string
	Password string

	// DB is the database number (SELECT). Default 0.
	DB int

	// TLS, when set, makes the client connect with TLS using this
	// configuration (client certificates in Certificates). It is cloned,
	// never modified.
	TLS *tls.Config

	// DialTimeout bounds Open: the probe connection, authentication and
	// read, and the construction of kvtools' store. Default
	// DefaultDialTimeout.
	DialTimeout time.Duration

	// RequestTimeout bounds any call whose context has no deadline.
	// Default DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// validate checks cfg and returns it with its defaults filled in.
func (cfg Config) validate() (Config, error) {
	if err := adapter.CheckNetwork(ErrInvalidConfig, &cfg.Endpoints, 1, "kvtools' Redis store takes one server (no Cluster; Sentinel is not supported by Open)",
		&cfg.DialTimeout, &cfg.RequestTimeout); err != nil {
		return cfg, err
	}
	if cfg.DB < 0 {
		return cfg, invalid("DB", fmt.Sprintf("negative: %d", cfg.DB))
	}
	return cfg, nil
}

// Open connects to the Redis server at cfg.Endpoints[0], checks with a
// read that it answers, and returns the store with this package's fixes
// applied (see Wrap).
//
// A server that does not answer within cfg.DialTimeout (or ctx's earlier
// deadline) gives an *UnreachableError, which matches store.ErrNotReachable,
// after that time. A server that answers with an error (wrong password,
// bad DB) gives that error. A cancelled ctx gives ctx.Err(). An invalid
// cfg gives a *ConfigError at once.
//
// The check runs on a short-lived client of its own, with DialTimeout as
// its socket timeouts, because kvtools' constructor sends CONFIG SET on a
// client whose socket timeout is 30s and ignores context deadlines: it
// took 30s to return against a hung server. So nothing is left running
// when the server does not answer. Only if the server stops answering
// between that check and the construction does the construction finish in
// the background (within those 30s) after Open has returned its error; the
// store it built is then closed.
func Open(ctx context.Context, cfg Config) (store.Store, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	ep := cfg.Endpoints[0]
	deadline, err := adapter.OpenDeadline(ctx, cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	if err := probe(dctx, cfg, time.Until(deadline)); err != nil {
		if refused := tlsRefusal(dctx, ep, cfg.TLS, err); refused != nil {
			return nil, refused
		}
		return nil, openError(ctx, ep, adapter.Explain(ctx, "redis", cfg.Endpoints, cfg.TLS, err))
	}

	kcfg := &kvredis.Config{Username: cfg.Username, Password: cfg.Password, DB: cfg.DB}
	if cfg.TLS != nil {
		kcfg.TLS = cfg.TLS.Clone()
	}
	type built struct {
		kv  *kvredis.Store
		err error
	}
	done := make(chan built, 1)
	go func() {
		kv, err := kvredis.New(dctx, cfg.Endpoints, kcfg)
		done <- built{kv, err}
	}()
	select {
	case b := <-done:
		if b.err != nil {
			return nil, openError(ctx, ep, b.err)
		}
		return wrapOwn(b.kv, goredis.NewClient(watchOptions(cfg)), cfg.DB, cfg.RequestTimeout), nil
	case <-dctx.Done():
		go func() {
			if b := <-done; b.kv != nil {
				_ = b.kv.Close()
			}
		}()
		return nil, openError(ctx, ep, fmt.Errorf("kvtools' constructor: %w", dctx.Err()))
	}
}

// probe reads adapter.ProbeKey on a client of its own, bounded by timeout.
// A user without rights on that key (an ACL user limited to its election's
// keys) gets NOPERM: the server answered an authenticated connection,
// which is all the probe checks.
func probe(ctx context.Context, cfg Config, timeout time.Duration) error {
	if timeout <= 0 {
		return context.DeadlineExceeded
	}
	opt := &goredis.Options{
		Addr:                  cfg.Endpoints[0],
		Username:              cfg.Username,
		Password:              cfg.Password,
		DB:                    cfg.DB,
		DialTimeout:           timeout,
		ReadTimeout:           timeout,
		WriteTimeout:          timeout,
		ContextTimeoutEnabled: true,
		MaxRetries:            -1, // no retries
		DialerRetries:         1,
		PoolSize:              1,
	}
	if cfg.TLS != nil {
		opt.TLSConfig = cfg.TLS.Clone()
	}
	c := goredis.NewClient(opt)
	defer func() { _ = c.Close() }()
	if err := c.Get(ctx, adapter.ProbeKey).Err(); err != nil && !errors.Is(err, goredis.Nil) && !goredis.IsPermissionError(err) {
		return err
	}
	return nil
}

// watchOptions configures the client of the store's watches: the server,
// credentials, DB and TLS of kvtools' client, with DialTimeout to connect
// and RequestTimeout for each socket read and write, context deadlines
// applied.
func watchOptions(cfg Config) *goredis.Options {
	opt := &goredis.Options{
		Addr:                  cfg.Endpoints[0],
		Username:              cfg.Username,
		Password:              cfg.Password,
		DB:                    cfg.DB,
		DialTimeout:           cfg.DialTimeout,
		ReadTimeout:           cfg.RequestTimeout,
		WriteTimeout:          cfg.RequestTimeout,
		ContextTimeoutEnabled: true,
		PoolSize:              2, // one goroutine reads; the Pub/Sub connection is apart
	}
	if cfg.TLS != nil {
		opt.TLSConfig = cfg.TLS.Clone()
	}
	return opt
}

// openError classifies a failure of Open.
func openError(ctx context.Context, ep string, err error) error {
	return adapter.OpenError(ctx, "redis", []string{ep}, err, unreachable)
}
