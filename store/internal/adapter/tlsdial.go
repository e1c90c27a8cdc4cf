package adapter

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
)

// ForEndpoint returns a copy of cfg (which must not be nil) for a TLS
// connection to endpoint, host:port: its ServerName, when empty, is
// endpoint's host, the name the server's certificate is checked against.
func ForEndpoint(cfg *tls.Config, endpoint string) *tls.Config {
	c := cfg.Clone()
	if c.ServerName == "" {
		if host, _, err := net.SplitHostPort(endpoint); err == nil {
			c.ServerName = host
		}
	}
	return c
}

// DialTLS connects to endpoint over TCP and completes a TLS handshake with
// ForEndpoint(cfg, endpoint), before ctx ends.
func DialTLS(ctx context.Context, endpoint string, cfg *tls.Config) (net.Conn, error) {
	d := tls.Dialer{Config: ForEndpoint(cfg, endpoint)}
	return d.DialContext(ctx, "tcp", endpoint)
}

// RemoteAlert returns the TLS alert the peer sent, found in err: the
// *net.OpError whose Op is "remote error" (its Err is the alert, such as
// "tls: unknown certificate authority"). It returns nil when err holds
// none.
func RemoteAlert(err error) *net.OpError {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return op
	}
	return nil
}
