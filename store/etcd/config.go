package etcd

import (
	"crypto/tls"
	"time"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

const (
	// defaultDialTimeout is Config.DialTimeout's default.
	defaultDialTimeout = adapter.DefaultDialTimeout

	// defaultRequestTimeout is Config.RequestTimeout's default.
	defaultRequestTimeout = adapter.DefaultRequestTimeout
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
	// Password is a store.Secret: fmt, JSON and slog show it masked.
	Password lstore.Secret

	// TLS, when set, makes the client dial the members with TLS using this
	// configuration (server CA in RootCAs, client certificates in
	// Certificates). It is cloned, never modified.
	TLS *tls.Config

	// DialTimeout bounds Open: the connection, the authentication when
	// Username is set, and the probe read. Default 5s.
	DialTimeout time.Duration

	// RequestTimeout bounds any call whose context has no deadline.
	// Default 5s.
	RequestTimeout time.Duration
}

// validate checks cfg and returns it with its defaults filled in.
func (cfg Config) validate() (Config, error) {
	if err := adapter.CheckNetwork(errInvalidConfig, &cfg.Endpoints, 0, "", &cfg.DialTimeout, &cfg.RequestTimeout); err != nil {
		return cfg, err
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		return cfg, invalid("Username", "Username and Password go together (etcd authenticates with both; for certificate authentication use TLS)")
	}
	return cfg, nil
}
