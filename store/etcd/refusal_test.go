package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// mtlsServer listens on 127.0.0.1 with TLS, requires client certificates
// signed by ca, and holds each connection open (as a server waiting for a
// request) until the test ends.
func mtlsServer(t *testing.T, ca storetest.CA, maxVersion uint16) string {
	t.Helper()
	now := time.Now()
	cfg := &tls.Config{
		Certificates: []tls.Certificate{ca.Leaf(t, "127.0.0.1", x509.ExtKeyUsageServerAuth, now.Add(-time.Hour), now.Add(time.Hour))},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(),
		MinVersion: tls.VersionTLS12, MaxVersion: maxVersion,
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				go func() { <-done; _ = c.Close() }()
				_, _ = c.Read(make([]byte, 1)) // the handshake, then wait
			}()
		}
	}()
	t.Cleanup(func() { close(done); _ = ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// refused names the client certificate a server refuses, and finds
// nothing to say about one it accepts, over TLS 1.3 (the verdict comes
// after the client's handshake) and TLS 1.2 (during it).
func TestRefusedNamesTheClientCertificate(t *testing.T) {
	ca, other := storetest.NewCA(t, "trusted CA"), storetest.NewCA(t, "untrusted CA")
	roots := ca.Pool()
	now := time.Now()
	client := func(certs ...tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}
	}
	for _, version := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		addr := mtlsServer(t, ca, version)
		for _, c := range []struct {
			name string
			cfg  *tls.Config
			want []string // "" : accepted
		}{
			{"good", client(ca.Leaf(t, "good", x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(time.Hour))), nil},
			{"untrusted issuer", client(other.Leaf(t, "stranger", x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(time.Hour))),
				[]string{`subject "stranger"`, `issuer "untrusted CA"`, "does the server trust"}},
			{"expired", client(ca.Leaf(t, "old", x509.ExtKeyUsageClientAuth, now.Add(-48*time.Hour), now.Add(-24*time.Hour))),
				[]string{`subject "old"`, "expired on"}},
			{"not yet valid", client(ca.Leaf(t, "young", x509.ExtKeyUsageClientAuth, now.Add(24*time.Hour), now.Add(48*time.Hour))),
				[]string{"not valid before"}},
			{"server certificate", client(ca.Leaf(t, "server", x509.ExtKeyUsageServerAuth, now.Add(-time.Hour), now.Add(time.Hour))),
				[]string{"not for client authentication"}},
			{"none", client(), []string{"none given"}},
		} {
			t.Run(tls.VersionName(version)+"/"+c.name, func(t *testing.T) {
				err := refused(context.Background(), addr, c.cfg)
				if c.want == nil {
					if err != nil {
						t.Fatalf("accepted certificate reported: %v", err)
					}
					return
				}
				if !errors.Is(err, errCertificateRefused) || !errors.Is(err, lstore.ErrTLS) {
					t.Fatalf("got %v, want errCertificateRefused (and store.ErrTLS)", err)
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%q does not say %q", err, w)
					}
				}
				if !strings.Contains(err.Error(), "remote error: tls:") {
					t.Errorf("%q does not give the server's alert", err)
				}
			})
		}
	}
}

// Open against a server that refuses the client certificate returns
// errCertificateRefused, naming the certificate, within its DialTimeout
// and the probe's bound, with nothing left running (TestMain's goleak).
func TestOpenNamesARefusedClientCertificate(t *testing.T) {
	ca, other := storetest.NewCA(t, "trusted CA"), storetest.NewCA(t, "untrusted CA")
	roots := ca.Pool()
	addr := mtlsServer(t, ca, tls.VersionTLS13)
	now := time.Now()
	cfg := Config{
		Endpoints: []string{addr}, DialTimeout: 500 * time.Millisecond,
		TLS: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12,
			Certificates: []tls.Certificate{other.Leaf(t, "stranger", x509.ExtKeyUsageClientAuth, now.Add(-time.Hour), now.Add(time.Hour))}},
	}
	for _, user := range []string{"", "leadership"} {
		cfg.Username, cfg.Password = user, ""
		if user != "" {
			cfg.Password = "s3cret-password"
		}
		s, err := Open(context.Background(), cfg)
		if err == nil {
			_ = s.Close()
			t.Fatalf("user %q: opened", user)
		}
		if !errors.Is(err, errCertificateRefused) || !errors.Is(err, lstore.ErrTLS) || !strings.Contains(err.Error(), `issuer "untrusted CA"`) {
			t.Errorf("user %q: got %v, want errCertificateRefused naming the issuer", user, err)
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("user %q: %q shows the password or takes several lines", user, err)
		}
	}
}
