package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"syscall"
	"time"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// errTLSRefused is matched (errors.Is) by the error of an Open whose TLS
// connection the server refused with an alert: most often the client
// certificate (none given, signed by a CA the server does not trust,
// expired), which a TLS 1.3 server checks only after the client's side of
// the handshake is done. The message holds the server's alert, such as
// "remote error: tls: unknown certificate authority". It matches the
// shared store.ErrTLS.
var errTLSRefused = adapter.Sentinel("redis: the server refused the TLS connection", lstore.ErrTLS)

// tlsRefusedError is the error of an Open refused by a TLS alert. It does
// not unwrap to the alert, a *net.OpError, so that it is not taken for an
// unreachable server: trying again cannot help.
type tlsRefusedError struct {
	endpoint string
	alert    error
}

func (e *tlsRefusedError) Error() string {
	return "redis: open " + e.endpoint + ": the server refused the TLS connection (check the client certificate: cert and key): " + e.alert.Error()
}

// Is reports whether errTLSRefused is, or matches, target.
func (e *tlsRefusedError) Is(target error) bool { return errors.Is(errTLSRefused, target) }

// alertWait bounds how long tlsRefusal waits for the server's alert.
const alertWait = 2 * time.Second

// tlsRefusal returns a *tlsRefusedError when err, the failed probe of
// endpoint with TLS configuration cfg, comes from a TLS alert of the
// server, or nil. A TLS 1.3 server rejects a client certificate after the
// client has finished its handshake: the client's first command then
// meets the alert, or, when the server has already closed the
// connection, a reset that hides it. For a reset or an EOF, tlsRefusal
// connects again and reads without writing, to receive the alert.
func tlsRefusal(ctx context.Context, endpoint string, cfg *tls.Config, err error) error {
	if cfg == nil || errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	if alert := adapter.RemoteAlert(err); alert != nil {
		return &tlsRefusedError{endpoint: endpoint, alert: alert}
	}
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, io.EOF) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), alertWait)
	defer cancel()
	c, err := adapter.DialTLS(ctx, endpoint, cfg)
	if err != nil {
		if alert := adapter.RemoteAlert(err); alert != nil {
			return &tlsRefusedError{endpoint: endpoint, alert: alert}
		}
		return nil
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetReadDeadline(dl)
	}
	// A server that accepts the connection waits for a command: the read
	// times out. One that refuses it sends its alert.
	_, err = c.Read(make([]byte, 1))
	if alert := adapter.RemoteAlert(err); alert != nil {
		return &tlsRefusedError{endpoint: endpoint, alert: alert}
	}
	return nil
}
