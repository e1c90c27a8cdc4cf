package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// pwServer speaks just enough of PostgreSQL's startup protocol to be sent
// a password: it answers an SSLRequest with 'N' (decline) or with 'S' and a
// TLS handshake presenting a certificate of a CA nobody trusts (untrusted),
// then asks for the password in clear and records what it receives.
type pwServer struct {
	addr string
	ln   net.Listener
	wg   sync.WaitGroup

	mu        sync.Mutex
	passwords []string
}

func newPwServer(t *testing.T, untrusted bool) *pwServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &pwServer{addr: ln.Addr().String(), ln: ln}
	var cfg *tls.Config
	if untrusted {
		ca := storetest.NewCA(t, "nobody trusts me")
		leaf := ca.Leaf(t, "127.0.0.1", x509.ExtKeyUsageServerAuth, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		cfg = &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12}
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				f.serve(c, cfg)
			}()
		}
	}()
	return f
}

func (f *pwServer) serve(c net.Conn, cfg *tls.Config) {
	be := pgproto3.NewBackend(c, c)
	msg, err := be.ReceiveStartupMessage()
	if err != nil {
		return
	}
	if _, ok := msg.(*pgproto3.SSLRequest); ok {
		if cfg == nil {
			if _, err := c.Write([]byte{'N'}); err != nil {
				return
			}
		} else {
			if _, err := c.Write([]byte{'S'}); err != nil {
				return
			}
			tc := tls.Server(c, cfg)
			if tc.Handshake() != nil {
				return
			}
			c = tc
			be = pgproto3.NewBackend(c, c)
		}
		if msg, err = be.ReceiveStartupMessage(); err != nil {
			return
		}
	}
	if _, ok := msg.(*pgproto3.StartupMessage); !ok {
		return
	}
	be.Send(&pgproto3.AuthenticationCleartextPassword{})
	if be.Flush() != nil {
		return
	}
	if be.SetAuthType(pgproto3.AuthTypeCleartextPassword) != nil {
		return
	}
	msg, err = be.Receive()
	if err != nil {
		return
	}
	if pw, ok := msg.(*pgproto3.PasswordMessage); ok {
		f.mu.Lock()
		f.passwords = append(f.passwords, pw.Password)
		f.mu.Unlock()
	}
	be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: "fake server"})
	_ = be.Flush()
}

// received closes the server, waits for its connections to end and
// returns the passwords it was sent.
func (f *pwServer) received() []string {
	_ = f.ln.Close()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.passwords
}

// TestNoPasswordWithoutVerifiedTLS: a password (or client key) is never
// sent to a server that declines TLS or presents a certificate nobody
// trusts, unless the DSN asks for plain text (sslmode=disable); the refusal
// names the way out and matches errInsecure.
func TestNoPasswordWithoutVerifiedTLS(t *testing.T) {
	const secret = "n0tInClear"
	ca := storetest.NewCA(t, "trusted")
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		untrusted bool
		params    string
		insecure  bool // refused before any connection (errInsecure)
	}{
		{"no sslmode, TLS declined", false, "", true},
		{"prefer, TLS declined", false, "sslmode=prefer", true},
		{"allow, TLS declined", false, "sslmode=allow", true},
		{"require, TLS declined", false, "sslmode=require", true},
		{"no sslmode, untrusted certificate", true, "", true},
		{"require, untrusted certificate", true, "sslmode=require", true},
		{"verify-full, TLS declined", false, "sslmode=verify-full&sslrootcert=" + caFile, false},
		{"verify-full, untrusted certificate", true, "sslmode=verify-full&sslrootcert=" + caFile, false},
		{"verify-ca, untrusted certificate", true, "sslmode=verify-ca&sslrootcert=" + caFile, false},
		{"require with sslrootcert, untrusted certificate", true, "sslmode=require&sslrootcert=" + caFile, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newPwServer(t, tc.untrusted)
			dsn := "postgres://app:" + secret + "@" + srv.addr + "/db?connect_timeout=10"
			if tc.params != "" {
				dsn += "&" + tc.params
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			kv, err := Open(ctx, Config{DSN: lstore.Secret(dsn)})
			if err == nil {
				_ = kv.Close()
				t.Fatal("opened")
			}
			if got := srv.received(); len(got) > 0 {
				t.Errorf("the server was sent the password %q", got)
			}
			if tc.insecure != errors.Is(err, errInsecure) {
				t.Errorf("errors.Is(err, errInsecure) = %v, want %v: %v", !tc.insecure, tc.insecure, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %v", err)
			}
			t.Logf("%v", err)
		})
	}

	// Plain text asked for explicitly: the password goes (the fake server
	// is able to tell).
	srv := newPwServer(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if kv, err := Open(ctx, Config{DSN: lstore.Secret("postgres://app:" + secret + "@" + srv.addr + "/db?connect_timeout=10&sslmode=disable")}); err == nil {
		_ = kv.Close()
		t.Fatal("opened the fake server")
	}
	if got := srv.received(); len(got) != 1 || got[0] != secret {
		t.Errorf("sslmode=disable: the server got %q, want the password once", got)
	}
}
