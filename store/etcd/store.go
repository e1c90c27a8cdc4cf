package etcd

import (
	"context"
	"errors"
	"time"

	"github.com/kvtools/etcdv3"
	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/guard"
)

// Store is an open etcd store: it implements valkeyrie's store.Store (and
// so leadership.Backend) and fenced.Putter, with this package's fixes
// (see the package documentation). Close closes the client and waits, at
// most Config.RequestTimeout, for abandoned calls to finish.
type Store struct{ *guarded }

// guarded is the guard layer a *Store embeds: its calls return by their
// context's deadline, or after RequestTimeout.
type guarded = guard.Fenced

// Open connects to the etcd cluster at cfg.Endpoints, checks with a
// linearizable read that it answers, and returns the store with this
// package's fixes applied. The etcd client's own log output is
// discarded, from its creation on (its authentication included).
//
// A cluster that does not answer within cfg.DialTimeout (or ctx's earlier
// deadline) gives an error matching store.ErrUnreachable, which matches
// store.ErrNotReachable, after that time; nothing of the client is left
// running. A cancelled ctx gives ctx.Err(). An invalid cfg gives a
// *store.ConfigError at once.
func Open(ctx context.Context, cfg Config) (*Store, error) {
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
		Password:          string(cfg.Password),
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
	f := newFixed(kv)
	s := &Store{guard.NewFenced(f, f, cfg.RequestTimeout)}
	pctx, cancel := context.WithDeadline(ctx, deadline)
	_, err = s.Get(pctx, adapter.ProbeKey, &store.ReadOptions{Consistent: true})
	cancel()
	// A user without read rights on the probe key is refused after the
	// cluster's linearizable read: the cluster answered, and the user is
	// authenticated.
	if err != nil && !errors.Is(err, store.ErrKeyNotFound) && !errors.Is(err, errPermissionDenied) {
		_ = s.Close()
		return nil, openError(ctx, cfg.Endpoints, explain(ctx, cfg.Endpoints, cfg.TLS, err))
	}
	return s, nil
}

// openError classifies a failure of Open.
func openError(ctx context.Context, endpoints []string, err error) error {
	return adapter.Refine(adapter.OpenError(ctx, backend, endpoints, err, func(err error) bool {
		return errors.Is(err, store.ErrNotReachable) || errors.Is(err, context.DeadlineExceeded)
	}), kinds)
}
