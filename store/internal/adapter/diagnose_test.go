package adapter_test

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

	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// newTLSServer is an HTTPS server whose handshake errors are not logged.
func newTLSServer(t *testing.T) *httptest.Server {
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func TestDialNamesRefusedPort(t *testing.T) {
	refused := storetest.RefusedAddr(t)
	if err := adapter.Dial(context.Background(), []string{refused}); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Dial(refused) = %v, want connection refused", err)
	}
	open := storetest.ServeAddr(t, func(c net.Conn) { _ = c.Close() })
	if err := adapter.Dial(context.Background(), []string{refused, open}); err != nil {
		t.Errorf("Dial(refused, open) = %v, want nil: one endpoint accepts", err)
	}
}

func TestDiagnoseTLSMismatch(t *testing.T) {
	tlsServer := newTLSServer(t)
	tlsAddr := strings.TrimPrefix(tlsServer.URL, "https://")
	closing := storetest.ServeAddr(t, func(c net.Conn) { _ = c.Close() })
	held := make(chan net.Conn, 16)
	t.Cleanup(func() {
		for len(held) > 0 {
			_ = (<-held).Close()
		}
	})
	silent := storetest.ServeAddr(t, func(c net.Conn) { held <- c })             // reads nothing, answers nothing
	asked := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // test server

	for _, tc := range []struct {
		name string
		addr string
		cfg  *tls.Config
		want error
	}{
		{"plain client, TLS server", tlsAddr, nil, adapter.ErrServerSpeaksTLS},
		{"TLS client, server that closes", closing, asked, adapter.ErrServerSpeaksPlain},
		{"TLS client, silent server", silent, asked, adapter.ErrNoHandshake},
		{"TLS client, TLS server", tlsAddr, asked, nil},
		{"TLS client, untrusted certificate", tlsAddr, &tls.Config{MinVersion: tls.VersionTLS12}, nil}, // checked below
		{"plain client, refused port", storetest.RefusedAddr(t), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := adapter.Diagnose(context.Background(), tc.addr, tc.cfg)
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
	if err := adapter.Explain(context.Background(), "redis", []string{addr}, nil, denied); err != denied {
		t.Errorf("Explain(denied) = %v, want it unchanged", err)
	}
	timedOut := context.DeadlineExceeded
	err := adapter.Explain(context.Background(), "redis", []string{addr}, nil, timedOut)
	var ue *adapter.UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, adapter.ErrServerSpeaksTLS) || !errors.Is(err, store.ErrNotReachable) {
		t.Errorf("Explain(timeout) = %v, want an *UnreachableError with ErrServerSpeaksTLS", err)
	}
}
