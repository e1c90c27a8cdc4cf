package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	"github.com/kvtools/etcdv3"
	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

const (
	// Scheme names this backend, as in etcd://host:port.
	Scheme = "etcd"

	// DefaultDialTimeout is Config.DialTimeout's default.
	DefaultDialTimeout = adapter.DefaultDialTimeout

	// DefaultRequestTimeout is Config.RequestTimeout's default.
	DefaultRequestTimeout = adapter.DefaultRequestTimeout
)

// Config of an etcd store for elections. Zero values take documented
// defaults; the zero Config is invalid only for lack of an endpoint.
type Config struct {
	// Endpoints are the cluster members' client addresses, host:port
	// (no scheme: the client uses https when TLS is set, http otherwise).
	// At least one; the client balances over all of them.
	Endpoints []string

	// Username and Password authenticate with etcd's auth (both or
	// neither). For client-certificate authentication, leave them empty
	// and put the certificate in TLS.
	Username string
	Password string

	// TLS, when set, makes the client dial the members with TLS using this
	// configuration (server CA in RootCAs, client certificates in
	// Certificates). It is cloned, never modified.
	TLS *tls.Config

	// DialTimeout bounds Open: the connection, the authentication when
	// Username is set, and the probe read. Default DefaultDialTimeout.
	DialTimeout time.Duration

	// RequestTimeout bounds any call whose context has no deadline.
	// Default DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// validate checks cfg and returns it with its defaults filled in.
func (cfg Config) validate() (Config, error) {
	if err := adapter.CheckNetwork(ErrInvalidConfig, &cfg.Endpoints, 0, "", &cfg.DialTimeout, &cfg.RequestTimeout); err != nil {
		return cfg, err
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		return cfg, invalid("Username", "Username and Password go together (etcd authenticates with both; for certificate authentication use TLS)")
	}
	return cfg, nil
}

// Open connects to the etcd cluster at cfg.Endpoints, checks with a
// linearizable read that it answers, and returns the store with this
// package's fixes applied (see Wrap). The etcd client's own log output is
// discarded, from its creation on (its authentication included).
//
// A cluster that does not answer within cfg.DialTimeout (or ctx's earlier
// deadline) gives an *UnreachableError, which matches
// store.ErrNotReachable, after that time; nothing of the client is left
// running. A cancelled ctx gives ctx.Err(). An invalid cfg gives a
// *ConfigError at once.
func Open(ctx context.Context, cfg Config) (store.Store, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	deadline, err := adapter.OpenDeadline(ctx, cfg.DialTimeout)
	if err != nil {
		return nil, err
	}
	kcfg := &etcdv3.Config{
		// The client's dial timeout also bounds the authentication that
		// etcdv3.New runs when Username is set; without it that call
		// is unbounded.
		ConnectionTimeout: time.Until(deadline),
		Username:          cfg.Username,
		Password:          cfg.Password,
	}
	if cfg.TLS != nil {
		kcfg.TLS = cfg.TLS.Clone()
	}
	if kcfg.ConnectionTimeout <= 0 {
		return nil, unreachable(cfg.Endpoints, context.DeadlineExceeded)
	}
	// gRPC retries a refused connection until the deadline: a closed port
	// is named at once instead ("connection refused").
	dctx, cancel := context.WithDeadline(ctx, deadline)
	err = adapter.Dial(dctx, cfg.Endpoints)
	cancel()
	if err != nil {
		return nil, openError(ctx, cfg.Endpoints, unreachable(cfg.Endpoints, err))
	}
	kv, err := newKV(ctx, cfg.Endpoints, kcfg)
	if err != nil { // with Username: no answer to the authentication, or a refusal
		return nil, openError(ctx, cfg.Endpoints, explain(ctx, cfg.Endpoints, cfg.TLS, err))
	}
	s := Wrap(kv, cfg.RequestTimeout)
	pctx, cancel := context.WithDeadline(ctx, deadline)
	_, err = s.Get(pctx, adapter.ProbeKey, &store.ReadOptions{Consistent: true})
	cancel()
	// A user without read rights on the probe key is refused after the
	// cluster's linearizable read: the cluster answered, and the user is
	// authenticated.
	if err != nil && !errors.Is(err, store.ErrKeyNotFound) && !errors.Is(err, ErrPermissionDenied) {
		_ = s.Close()
		return nil, openError(ctx, cfg.Endpoints, explain(ctx, cfg.Endpoints, cfg.TLS, err))
	}
	return s, nil
}

// openError classifies a failure of Open.
func openError(ctx context.Context, endpoints []string, err error) error {
	return adapter.OpenError(ctx, "etcd", endpoints, err, func(err error) bool {
		return errors.Is(err, store.ErrNotReachable) || errors.Is(err, context.DeadlineExceeded)
	})
}
