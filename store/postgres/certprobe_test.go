package postgres

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// probePKI is a CA, a server certificate for 127.0.0.1 and two client
// certificates it signed: one valid, one expired.
type probePKI struct {
	roots           *x509.CertPool
	server          tls.Certificate
	client, expired tls.Certificate
}

func newProbePKI(t *testing.T) probePKI {
	t.Helper()

	ca, now := storetest.NewCA(t, "probe CA"), time.Now()
	valid := func(cn string, usage x509.ExtKeyUsage) tls.Certificate {
		return ca.Leaf(t, cn, usage, now.Add(-time.Hour), now.Add(time.Hour))
	}

	return probePKI{
		roots: ca.Pool(), server: valid("127.0.0.1", x509.ExtKeyUsageServerAuth), client: valid("u", x509.ExtKeyUsageClientAuth),
		expired: ca.Leaf(t, "u", x509.ExtKeyUsageClientAuth, now.Add(-48*time.Hour), now.Add(-24*time.Hour)),
	}
}

// clientConfig is the driver's configuration of a connection to addr
// presenting cert over TLS 1.3.
func (p probePKI) clientConfig(t *testing.T, addr string, cert tls.Certificate) *pgconn.Config {
	t.Helper()

	host, port, _ := net.SplitHostPort(addr)

	cc, err := pgconn.ParseConfig(fmt.Sprintf("host=%s port=%s user=u dbname=d sslmode=disable connect_timeout=5", host, port))
	if err != nil {
		t.Fatal(err)
	}

	cc.TLSConfig = &tls.Config{RootCAs: p.roots, ServerName: host, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}

	return cc
}

// fakeServer is a local listener speaking the start of PostgreSQL's
// protocol: it reads SSLRequest and answers each connection with serve,
// given the connection's index (from 0).
type fakeServer struct {
	ln    net.Listener
	conns atomic.Int32
	wg    sync.WaitGroup
}

func newFakeServer(t *testing.T, serve func(i int, c net.Conn)) *fakeServer {
	t.Helper()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	fs := &fakeServer{ln: ln}
	fs.wg.Add(1)

	go func() {
		defer fs.wg.Done()

		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}

			i := int(fs.conns.Add(1)) - 1
			fs.wg.Add(1)

			go func() {
				defer fs.wg.Done()
				defer c.Close()

				_ = c.SetDeadline(time.Now().Add(10 * time.Second))

				req := make([]byte, len(sslRequest))
				if _, err := io.ReadFull(c, req); err != nil || !bytes.Equal(req, sslRequest) {
					return
				}

				serve(i, c)
			}()
		}
	}()

	t.Cleanup(func() {
		_ = ln.Close()
		fs.wg.Wait()
	})

	return fs
}

// tlsServer answers 'S' and runs a TLS 1.3 handshake with p's server
// certificate, asking for a client certificate with auth. Once it
// succeeded, it calls then with the TLS connection.
func (p probePKI) tlsServer(c net.Conn, auth tls.ClientAuthType, then func(tc *tls.Conn)) {
	if _, err := c.Write([]byte{'S'}); err != nil {
		return
	}

	tc := tls.Server(c, &tls.Config{
		Certificates: []tls.Certificate{p.server}, ClientCAs: p.roots, ClientAuth: auth, MinVersion: tls.VersionTLS13,
	})
	if tc.Handshake() == nil && then != nil {
		then(tc)
	}
}

// The driver's first connection ends in a reset right after the handshake,
// as when a loaded client has written its startup message before the
// server's alert came; the probe, a second connection, reads that alert.
func TestCertVerdictFindsAlertHiddenByReset(t *testing.T) {
	p := newProbePKI(t)
	fs := newFakeServer(t, func(i int, c net.Conn) {
		if i > 0 { // the probe: the certificate is checked and refused
			p.tlsServer(c, tls.RequireAndVerifyClientCert, nil)
			return
		}

		p.tlsServer(c, tls.RequestClientCert, func(tc *tls.Conn) {
			_, _ = tc.Read(make([]byte, 1)) // the startup message
			_ = c.(*net.TCPConn).SetLinger(0)
		})
	})

	cc := p.clientConfig(t, fs.ln.Addr().String(), p.expired)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	conn, drvErr := pgconn.ConnectConfig(ctx, cc)
	if drvErr == nil {
		_ = conn.Close(ctx)
		t.Fatal("connected")
	}

	if !hidesVerdict(drvErr) {
		t.Fatalf("the driver's error %q does not look like a reset", drvErr)
	}

	err := certVerdict(ctx, cc, drvErr)
	if adapter.RemoteAlert(err) == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("no alert about the certificate in %q", err)
	}

	if strings.Contains(err.Error(), "\n") {
		t.Errorf("%q takes more than a line", err)
	}

	t.Logf("found: %v", err)

	if !errors.Is(err, drvErr) {
		t.Errorf("%q does not wrap the driver's error", err)
	}

	kind, hint := refusal(err, &pgx.ConnConfig{Config: *cc})
	if kind != errTLS || !strings.Contains(hint, "refused the client certificate") {
		t.Errorf("classified as %v (%q), want errTLS, the certificate refused", kind, hint)
	}
}

// A server that accepts the certificate sends no alert: the probe gives up
// when ctx ends; so it does, at once, with a server without TLS and with
// an endpoint nobody listens on.
func TestCertProbeWithoutAlert(t *testing.T) {
	p := newProbePKI(t)
	accepting := newFakeServer(t, func(_ int, c net.Conn) {
		p.tlsServer(c, tls.RequireAndVerifyClientCert, func(tc *tls.Conn) { _, _ = tc.Read(make([]byte, 1)) })
	})
	plain := newFakeServer(t, func(_ int, c net.Conn) { _, _ = c.Write([]byte{'N'}) })

	for name, addr := range map[string]string{
		"accepting": accepting.ln.Addr().String(), "no TLS": plain.ln.Addr().String(), "nobody": storetest.RefusedAddr(t),
	} {
		cc := p.clientConfig(t, addr, p.client)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()

		got := probeCert(ctx, cc, addr, cc.TLSConfig)
		cancel()

		if got != nil {
			t.Errorf("%s: the probe found %v", name, got)
		}

		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: the probe took %v", name, d)
		}
	}

	if accepting.conns.Load() != 1 || plain.conns.Load() != 1 {
		t.Errorf("the servers saw %d and %d connections, want one each", accepting.conns.Load(), plain.conns.Load())
	}
}

// connectErr is the driver's error connecting with cc to addr.
func connectErr(t *testing.T, cc *pgconn.Config) error {
	t.Helper()

	conn, err := pgconn.ConnectConfig(context.Background(), cc)
	if err == nil {
		_ = conn.Close(context.Background())
		t.Fatal("connected")
	}

	return err
}

// Only a reset, EOF or broken pipe of a connection attempt, with a client
// certificate, is probed; every other error is left alone, undialed.
func TestCertVerdictLeavesOtherErrors(t *testing.T) {
	p := newProbePKI(t)
	fs := newFakeServer(t, func(_ int, c net.Conn) { p.tlsServer(c, tls.RequireAndVerifyClientCert, nil) })
	withCert := p.clientConfig(t, fs.ln.Addr().String(), p.expired)
	noCert := p.clientConfig(t, fs.ln.Addr().String(), p.expired)
	noCert.TLSConfig.Certificates = nil

	hangUp := newFakeServer(t, func(int, net.Conn) {}) // closes after SSLRequest
	eof := connectErr(t, p.clientConfig(t, hangUp.ln.Addr().String(), p.expired))
	refused := connectErr(t, p.clientConfig(t, storetest.RefusedAddr(t), p.expired))

	if !errors.Is(eof, io.EOF) || !hidesVerdict(eof) {
		t.Fatalf("the driver's error %q is not an EOF while connecting", eof)
	}

	for name, tc := range map[string]struct {
		cc  *pgconn.Config
		err error
	}{
		"not connecting":   {withCert, fmt.Errorf("read: %w", io.EOF)},
		"server error":     {withCert, errors.Join(eof, &pgconn.PgError{Code: "28000"})},
		"alert":            {withCert, errors.Join(eof, &net.OpError{Op: "remote error", Err: errors.New("tls: bad certificate")})},
		"refused at once":  {withCert, refused},
		"no certificate":   {noCert, eof},
		"no configuration": {nil, eof},
	} {
		if got := certVerdict(context.Background(), tc.cc, tc.err); got != tc.err {
			t.Errorf("%s: %q became %q", name, tc.err, got)
		}
	}

	if n := fs.conns.Load(); n != 0 {
		t.Errorf("the server saw %d probes, want none", n)
	}

	if got := certVerdict(context.Background(), withCert, eof); adapter.RemoteAlert(got) == nil {
		t.Errorf("an EOF while connecting was not probed: %q", got)
	}
}
