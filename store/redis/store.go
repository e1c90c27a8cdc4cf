package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	kvredis "github.com/kvtools/redis"
	goredis "github.com/redis/go-redis/v9"

	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/guard"
)

// Store is an open Redis store: it implements valkeyrie's store.Store
// (and so leadership.Backend) and fenced.Putter, with this package's
// fixes (see the package documentation). Close ends the watches, closes
// the clients and waits, at most Config.RequestTimeout, for the watches'
// goroutines.
type Store struct{ *guarded }

// guarded is the guard layer a *Store embeds: its calls return by their
// context's deadline, or after RequestTimeout.
type guarded = guard.Fenced

// Open connects to the Redis server at cfg.Endpoints[0], checks with a
// read that it answers, and returns the store with this package's fixes
// applied.
//
// A server that does not answer within cfg.DialTimeout (or ctx's earlier
// deadline) gives an error matching store.ErrUnreachable, which matches store.ErrNotReachable,
// after that time. A server that answers with an error (wrong password,
// bad DB) gives that error. A cancelled ctx gives ctx.Err(). An invalid
// cfg gives a *store.ConfigError at once.
//
// The check runs on a short-lived client of its own, with DialTimeout as
// its socket timeouts, because kvtools' constructor sends CONFIG SET on a
// client whose socket timeout is 30s and ignores context deadlines: it
// took 30s to return against a hung server. So nothing is left running
// when the server does not answer. Only if the server stops answering
// between that check and the construction does the construction finish in
// the background (within those 30s) after Open has returned its error; the
// store it built is then closed.
func Open(ctx context.Context, cfg Config) (*Store, error) {
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
		return nil, openError(ctx, ep, adapter.Explain(ctx, backend, cfg.Endpoints, cfg.TLS, err))
	}

	kcfg := &kvredis.Config{Username: cfg.Username, Password: string(cfg.Password), DB: cfg.DB}
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
		return &Store{wrapOwn(b.kv, goredis.NewClient(watchOptions(cfg)), cfg.DB, cfg.RequestTimeout)}, nil
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
		Password:              string(cfg.Password),
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
		Password:              string(cfg.Password),
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
	return adapter.Refine(adapter.OpenError(ctx, backend, []string{ep}, err, unreachable), kinds)
}
