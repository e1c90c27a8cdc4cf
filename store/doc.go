// Package store is what every store adapter of this module shares in its
// face: the error vocabulary (see errors.go), which every adapter's errors
// match with errors.Is (the adapters export no error values of their own,
// and at most one error type with the server's details), the
// *ConfigError of an unusable Config, and Secret, the one type that masks
// a credential wherever a Config is shown.
//
// The adapters (store/memory, store/etcd, store/consul, store/zookeeper,
// store/redis, store/postgres) all have one shape:
//
//	func Open(ctx context.Context, cfg Config) (*Store, error)
//
// where *Store implements valkeyrie's store.Store (and so
// leadership.Backend), fenced writes (fenced.Putter) where the backend
// can make them, and Close. Their Config types name the common parts
// alike: Endpoints, Username, Password (Token for Consul; both Secret), TLS
// (*tls.Config), DialTimeout and RequestTimeout. What only valkeyrie needs
// (registration under its StoreName, through which valkeyrie.NewStore
// opens it) is in each adapter's valkeyrie.go.
//
// So a caller can tell the kinds of failure apart whatever the backend:
//
//	switch {
//	case errors.Is(err, store.ErrAuth):        // wrong credentials
//	case errors.Is(err, store.ErrPermission):  // the credentials lack a right
//	case errors.Is(err, store.ErrTLS):         // the TLS handshake or a certificate failed
//	case errors.Is(err, store.ErrInvalidConfig):
//	case errors.Is(err, store.ErrClosed):      // the handle was closed (before ErrUnreachable, which it also matches)
//	case errors.Is(err, store.ErrUnreachable): // no answer; valkeyrie's ErrNotReachable
//	case errors.Is(err, store.ErrInvalidKey):  // a key the backend cannot store
//	}
//
// This package imports no adapter and not the root package.
package store
