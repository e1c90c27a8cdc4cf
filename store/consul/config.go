package consul

import (
	"crypto/tls"
	"time"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

const (
	// defaultDialTimeout bounds Open (connection, TLS handshake and the
	// first round trip), and each TCP connection and TLS handshake later,
	// when Config.DialTimeout is zero.
	defaultDialTimeout = adapter.DefaultDialTimeout

	// defaultRequestTimeout bounds every call whose context has no deadline
	// when Config.RequestTimeout is zero.
	defaultRequestTimeout = adapter.DefaultRequestTimeout

	// watchWait is how long one blocking query of a watch waits for a
	// change. Each query is also bounded by watchWait*17/16 (Consul adds
	// up to 1/16 of jitter) plus the request timeout, so a watch on a
	// connection that died silently fails within that.
	watchWait = 30 * time.Second

	// closeGrace bounds how long Close waits for the store's goroutines.
	closeGrace = 5 * time.Second

	// maxConns bounds the connections of a store's ordinary requests
	// (all but blocking queries), well below the agents' default
	// http_max_conns_per_client (200 per client IP, beyond which the
	// agent answers 429): enough for thousands of requests a second.
	maxConns = 64

	// watchRetryFor is how long the watch hub retries a failing blocking
	// query (with backoff) before it closes the watches, so that their
	// readers know and poll (the engine does, and watches again).
	watchRetryFor = 3 * time.Second

	// watchPacePerKey and watchPaceMax pace the watch hub's queries: the
	// next starts no sooner than this much per entry of the last reply
	// (up to watchPaceMax) after the last started. Each reply lists the
	// whole prefix: 1,000 entries changing all the time are read 20 times
	// a second.
	watchPacePerKey = 50 * time.Microsecond
	watchPaceMax    = 250 * time.Millisecond
)

// Config of a Consul store for elections. Zero values take the documented
// defaults.
type Config struct {
	// Endpoints holds exactly one address, host:port, of a Consul agent's
	// HTTP API (usually the local agent, which forwards to the servers).
	Endpoints []string

	// Token is the ACL token sent with every request. Empty: the
	// CONSUL_HTTP_TOKEN environment variable, as Consul's API client
	// reads it, else none (anonymous).
	// Token is a store.Secret: fmt, JSON and slog show it masked.
	Token lstore.Secret

	// TLS, when set, makes the store use HTTPS with this configuration
	// (cloned; never shared with other clients). Scheme is "http" without.
	TLS *tls.Config

	// DialTimeout bounds Open, and each TCP connection and TLS handshake.
	// Default 5s.
	DialTimeout time.Duration

	// RequestTimeout bounds every call whose context has no deadline.
	// Default 5s.
	RequestTimeout time.Duration
}

// settings is a validated Config with its defaults applied.
type settings struct {
	endpoint, scheme, token     string
	tls                         *tls.Config
	dialTimeout, requestTimeout time.Duration
}

// resolve validates c and applies the defaults.
func (c Config) resolve() (settings, error) {
	st := settings{scheme: "http", token: string(c.Token), dialTimeout: c.DialTimeout, requestTimeout: c.RequestTimeout}
	if err := adapter.CheckEndpoints(errInvalidConfig, c.Endpoints, 1, "a Consul client talks to one agent"); err != nil {
		return st, err
	}
	ep := c.Endpoints[0]
	st.endpoint = ep
	if c.TLS != nil {
		st.scheme, st.tls = "https", c.TLS.Clone()
	}
	return st, adapter.CheckDialRequest(errInvalidConfig, &st.dialTimeout, &st.requestTimeout)
}
