package open

import (
	"context"
	"os"
	"strings"

	"github.com/kvtools/valkeyrie/store"
)

// EnvVar is the environment variable FromEnv reads by default.
const EnvVar = "LEADERSHIP_STORE"

// Schemes lists the URL schemes Store understands in this program:
// memory, and those of every adapter the program imports (etcd; consul;
// zk, zookeeper; redis, rediss; postgres, postgresql; k8s), which
// Register adds. Read it after init.
var Schemes = builtInSchemes()

// Store opens the store a URL names, connects, and checks it with a round
// trip. Swapping backends is a matter of changing the URL:
//
//	memory://NAME                                      the embedded store; one per NAME in the process
//	etcd://[user:pass@]h1:2379,h2:2379[?tls=true&ca=FILE&cert=FILE&key=FILE]
//	consul://[token@]h:8500[?token=T&tls=true&ca=FILE]
//	zk://[user:pass@]h1:2181,h2:2181[?session_timeout=10s]    (digest auth with user:pass)
//	redis://[user:pass@]h:6379[/DB][?tls=true]        (rediss:// is redis with TLS)
//	postgres://user:pass@h:5432/db?sslmode=verify-full&sslrootcert=CA[&table=NAME]   (a libpq/pgx DSN)
//	k8s://NAMESPACE[?kubeconfig=FILE&context=NAME]
//
// Each network scheme needs its adapter imported (see the package
// documentation).
//
// Every network scheme also takes dial_timeout and request_timeout (such as
// 5s). An unknown parameter, a malformed value or an unknown scheme is a
// *ConfigError naming the field; an unreachable store is an error matching
// store.ErrNotReachable.
func Store(ctx context.Context, rawURL string) (store.Store, error) {
	s, err := Parse(rawURL)
	if err != nil {
		return nil, err
	}
	return s.Open(ctx)
}

// FromEnv opens the store named by the environment variable name
// (EnvVar when name is "").
func FromEnv(ctx context.Context, name string) (store.Store, error) {
	if name == "" {
		name = EnvVar
	}
	raw := os.Getenv(name)
	if strings.TrimSpace(raw) == "" {
		return nil, &ConfigError{Invalid: storeURL{}, Field: name, Reason: "environment variable is unset or empty", Err: ErrNoURL}
	}
	return Store(ctx, raw)
}

// Open connects to the store the spec names. A scheme that names no
// backend is a *ConfigError matching ErrUnknownScheme; one of a backend
// whose adapter the program did not import (see Register) also matches
// ErrBackendLeftOut, and says what to import.
func (s *Spec) Open(ctx context.Context) (store.Store, error) {
	b := backendFor(s.Scheme)
	switch {
	case b == nil:
		registry.RLock()
		known := strings.Join(Schemes, ", ")
		registry.RUnlock()
		return nil, &ConfigError{Invalid: storeURL{}, Field: "scheme", Value: s.Scheme, Reason: "unknown; want one of " + known, Err: ErrUnknownScheme}
	case b.open == nil:
		return nil, &ConfigError{Invalid: storeURL{}, Field: "scheme", Value: s.Scheme,
			Reason: "the " + b.name + " backend lives in a module of its own; a program that opens it must " + b.hint, Err: errLeftOut}
	}
	return b.open(s, ctx)
}

// nonNil keeps a nil concrete store from becoming a non-nil interface.
func nonNil[S store.Store](s S, err error) (store.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}
