package redis

import (
	"crypto/tls"
	"fmt"
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
	// Password is a store.Secret: fmt, JSON and slog show it masked.
	Password lstore.Secret

	// DB is the database number (SELECT). Default 0.
	DB int

	// TLS, when set, makes the client connect with TLS using this
	// configuration (client certificates in Certificates). It is cloned,
	// never modified.
	TLS *tls.Config

	// DialTimeout bounds Open: the probe connection, authentication and
	// read, and the construction of kvtools' store. Default
	// 5s.
	DialTimeout time.Duration

	// RequestTimeout bounds any call whose context has no deadline.
	// Default 5s.
	RequestTimeout time.Duration
}

// validate checks cfg and returns it with its defaults filled in.
func (cfg Config) validate() (Config, error) {
	if err := adapter.CheckNetwork(errInvalidConfig, &cfg.Endpoints, 1, "kvtools' Redis store takes one server (no Cluster; Sentinel is not supported by Open)",
		&cfg.DialTimeout, &cfg.RequestTimeout); err != nil {
		return cfg, err
	}
	if cfg.DB < 0 {
		return cfg, invalid("DB", fmt.Sprintf("negative: %d", cfg.DB))
	}
	return cfg, nil
}
