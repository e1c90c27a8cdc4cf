package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// probeWait caps how long certVerdict waits for the server's verdict on
// the client certificate, which a server sends right after the handshake.
const probeWait = 2 * time.Second

// sslRequest is PostgreSQL's SSLRequest message: length 8, code 80877103
// (1234 << 16 | 5679). The server answers 'S' when it accepts TLS.
var sslRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// certVerdict returns err, the failure of a connection attempt of cc, or
// err joined with the TLS alert by which the server refused cc's client
// certificate, which adapter.RemoteAlert then finds.
//
// With TLS 1.3 the client's handshake ends before the server has checked
// the client certificate: the server's alert comes after, and when the
// client has already written its startup message it may get a TCP reset
// instead, the alert lost. So when err is such a reset, EOF or broken pipe
// of a connection attempt and cc presents a client certificate,
// certVerdict dials each TLS endpoint of cc itself, sends SSLRequest,
// completes the handshake and reads one byte, writing nothing, until ctx
// ends or probeWait passes. It returns err when no server sends an alert.
func certVerdict(ctx context.Context, cc *pgconn.Config, err error) error {
	if cc == nil || !hidesVerdict(err) {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()

	for _, ep := range probeEndpoints(cc) {
		if alert := probeCert(ctx, cc, ep.addr, ep.tls); alert != nil {
			return &verdictError{alert: alert, err: err}
		}
	}

	return err
}

// verdictError is the failure err of a connection attempt explained by
// alert, the server's refusal of the client certificate found by a probe.
// Both are reachable with errors.Is and errors.As.
type verdictError struct {
	alert *net.OpError
	err   error
}

func (e *verdictError) Error() string {
	return e.alert.Error() + " (the server's verdict, read by a second connection after: " + e.err.Error() + ")"
}

func (e *verdictError) Unwrap() []error { return []error{e.alert, e.err} }

// hidesVerdict reports whether err, the failure of a connection attempt,
// can hide the server's refusal of the client certificate: a reset, EOF or
// broken pipe while connecting, with no alert and no server error in it.
func hidesVerdict(err error) bool {
	var (
		connect *pgconn.ConnectError
		pgErr   *pgconn.PgError
	)

	if !errors.As(err, &connect) || errors.As(err, &pgErr) || adapter.RemoteAlert(err) != nil {
		return false
	}

	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// probeEndpoint is a TCP address cc connects to with TLS, and that TLS
// configuration.
type probeEndpoint struct {
	addr string
	tls  *tls.Config
}

// probeEndpoints returns the TCP endpoints of cc and its fallbacks whose
// TLS configuration presents a client certificate, each once.
func probeEndpoints(cc *pgconn.Config) []probeEndpoint {
	var eps []probeEndpoint

	add := func(host string, port uint16, cfg *tls.Config) {
		if !presentsClientCert(cfg) || host == "" || strings.HasPrefix(host, "/") { // a Unix socket: no TLS
			return
		}

		addr := net.JoinHostPort(host, fmt.Sprint(port))
		for _, ep := range eps {
			if ep.addr == addr {
				return
			}
		}

		eps = append(eps, probeEndpoint{addr: addr, tls: cfg})
	}

	add(cc.Host, cc.Port, cc.TLSConfig)

	for _, fb := range cc.Fallbacks {
		add(fb.Host, fb.Port, fb.TLSConfig)
	}

	return eps
}

// probeCert connects to addr as cc's driver does (SSLRequest, unless
// cc.SSLNegotiation is "direct", then a TLS handshake with cfg), reads one
// byte and returns the TLS alert the server sent, or nil when it sent none
// before ctx ended.
func probeCert(ctx context.Context, cc *pgconn.Config, addr string, cfg *tls.Config) *net.OpError {
	dial := cc.DialFunc
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}

	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil
	}
	defer conn.Close()

	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}

	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if cc.SSLNegotiation != "direct" {
		answer := make([]byte, 1)
		if _, err := conn.Write(sslRequest); err != nil {
			return nil
		}

		if _, err := io.ReadFull(conn, answer); err != nil || answer[0] != 'S' {
			return nil
		}
	}

	tc := tls.Client(conn, adapter.ForEndpoint(cfg, addr))
	if err = tc.HandshakeContext(ctx); err == nil {
		_, err = tc.Read(make([]byte, 1))
	}

	return adapter.RemoteAlert(err)
}

// presentsClientCert reports whether a TLS configuration offers the server
// a client certificate.
func presentsClientCert(cfg *tls.Config) bool {
	return cfg != nil && (len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil)
}
