package adapter

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/kvtools/valkeyrie/store"
)

// listen serves each connection with serve until the test ends.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			serve(c)
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

// newTLSServer is an HTTPS server whose handshake errors are not logged.
func newTLSServer(t *testing.T) *httptest.Server {
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// refusedAddr is a loopback port nobody listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func TestDialNamesRefusedPort(t *testing.T) {
	refused := refusedAddr(t)
	if err := Dial(context.Background(), []string{refused}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Dial(refused) = %v, want connection refused", err)
	}
	open := listen(t, func(c net.Conn) { _ = c.Close() })
	if err := Dial(context.Background(), []string{refused, open}); err != nil {
		t.Errorf("Dial(refused, open) = %v, want nil: one endpoint accepts", err)
	}
}

func TestDiagnoseTLSMismatch(t *testing.T) {
	tlsServer := newTLSServer(t)
	tlsAddr := strings.TrimPrefix(tlsServer.URL, "https://")
	closing := listen(t, func(c net.Conn) { _ = c.Close() })
	held := make(chan net.Conn, 16)
	t.Cleanup(func() {
		for len(held) > 0 {
			_ = (<-held).Close()
		}
	})
	silent := listen(t, func(c net.Conn) { held <- c })                          // reads nothing, answers nothing
	asked := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // test server

	for _, tc := range []struct {
		name string
		addr string
		cfg  *tls.Config
		want error
	}{
		{"plain client, TLS server", tlsAddr, nil, ErrServerSpeaksTLS},
		{"TLS client, server that closes", closing, asked, ErrServerSpeaksPlain},
		{"TLS client, silent server", silent, asked, ErrNoHandshake},
		{"TLS client, TLS server", tlsAddr, asked, nil},
		{"TLS client, untrusted certificate", tlsAddr, &tls.Config{MinVersion: tls.VersionTLS12}, nil}, // checked below
		{"plain client, refused port", refusedAddr(t), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Diagnose(context.Background(), tc.addr, tc.cfg)
			switch {
			case tc.name == "TLS client, untrusted certificate":
				if err == nil || !strings.Contains(err.Error(), "TLS handshake with "+tc.addr+" failed") {
					t.Errorf("Diagnose = %v, want the handshake's failure", err)
				}
			case tc.want == nil && err != nil:
				t.Errorf("Diagnose = %v, want nil", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("Diagnose = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestExplainKeepsOtherErrors(t *testing.T) {
	tlsServer := newTLSServer(t)
	addr := strings.TrimPrefix(tlsServer.URL, "https://")
	denied := errors.New("WRONGPASS invalid password")
	if err := Explain(context.Background(), "redis", []string{addr}, nil, denied); err != denied {
		t.Errorf("Explain(denied) = %v, want it unchanged", err)
	}
	timedOut := context.DeadlineExceeded
	err := Explain(context.Background(), "redis", []string{addr}, nil, timedOut)
	var ue *UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, ErrServerSpeaksTLS) || !errors.Is(err, store.ErrNotReachable) {
		t.Errorf("Explain(timeout) = %v, want an *UnreachableError with ErrServerSpeaksTLS", err)
	}
}
