package all_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
)

// TestSecurePostgres runs the secured checks on postgres-secure
// (scripts/secure/postgres.sh): TLS with sslmode=verify-full, SCRAM
// passwords and client certificates (clientcert=verify-full), a candidate
// role with grants on the election table and row-level security limiting
// it to leadershiptest/ and secure/, a follower role that may only read,
// and a role without rights.
func TestSecurePostgres(t *testing.T) {
	runSecured(t, securedServer{
		name: "postgres",
		env:  "LEADERSHIP_POSTGRES_SECURE",
		ttl:  4 * time.Second, // TLS and SCRAM under -race on a loaded machine: 2s leases were lost to starvation
		bad:  postgresBadConfigs,
	})
}

// postgresBadConfigs are the candidate's URL (and the other role's) with
// one thing wrong each.
func postgresBadConfigs(t *testing.T, certs string) []badConfig {
	writer, other := patient(os.Getenv("LEADERSHIP_POSTGRES_SECURE")), patient(os.Getenv("LEADERSHIP_POSTGRES_SECURE_OTHER"))
	u, err := url.Parse(writer)
	if err != nil {
		t.Fatalf("LEADERSHIP_POSTGRES_SECURE %s: not a URL", redact(writer))
	}
	password, _ := u.User.Password()
	wrongPassword := *u
	wrongPassword.User = url.UserPassword(u.User.Username(), "not-"+password)
	// The candidate's password with the follower's certificate: its CN
	// names another role.
	otherCN := withParams(t, writer, map[string]string{"sslcert": certs + "/reader.crt", "sslkey": certs + "/reader.key"})
	return []badConfig{
		{name: "unknown CA", url: withParams(t, writer, map[string]string{"sslrootcert": certs + "/other-ca.crt"}),
			want: []string{"TLS handshake failed", "certificate signed by unknown authority"}, secret: password, kind: lstore.ErrTLS},
		{name: "client certificate of an untrusted CA", url: withParams(t, writer, map[string]string{"sslcert": certs + "/other-client.crt", "sslkey": certs + "/other-client.key"}),
			want: []string{"authentication refused", "valid client certificate"}, secret: password, kind: lstore.ErrAuth},
		{name: "expired client certificate", url: withParams(t, writer, map[string]string{"sslcert": certs + "/expired-client.crt", "sslkey": certs + "/expired-client.key"}),
			want: []string{"TLS handshake failed", "refused the client certificate", "expired certificate"}, secret: password, kind: lstore.ErrTLS},
		{name: "client certificate of another role", url: otherCN,
			want: []string{"authentication refused", `CN "leadership-reader" is not the user "leadership"`}, secret: password, kind: lstore.ErrAuth},
		{name: "no client certificate", url: withParams(t, writer, map[string]string{"sslcert": "", "sslkey": ""}),
			want: []string{"authentication refused", "requires a valid client certificate"}, secret: password, kind: lstore.ErrAuth},
		{name: "wrong password", url: wrongPassword.String(),
			want: []string{"authentication refused", "password authentication failed"}, secret: "not-" + password, kind: lstore.ErrAuth},
		{name: "missing permission", url: other,
			want: []string{"permission denied for table leadership_kv"}, kind: lstore.ErrPermission},
		{name: "plain text refused", url: withParams(t, writer, map[string]string{"sslmode": "disable", "sslrootcert": "", "sslcert": "", "sslkey": ""}),
			want: []string{"authentication refused", "no encryption"}, secret: password, kind: lstore.ErrAuth},
		{name: "TLS asked of a server without TLS", url: withParams(t, strings.Replace(writer, u.Host, plainPostgres(t), 1), nil),
			want: []string{"TLS handshake failed", "does not speak TLS"}, secret: password, kind: lstore.ErrTLS},
	}
}

// plainPostgres listens on 127.0.0.1 as a PostgreSQL server without TLS
// does: it answers an SSLRequest with 'N' (and closes the connection). It
// returns its address.
func plainPostgres(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 8) // length, then the SSLRequest code
				if _, err := c.Read(buf); err == nil {
					_, _ = c.Write([]byte{'N'})
				}
				_, _ = c.Read(buf) // until the client gives up
			}()
		}
	}()
	return ln.Addr().String()
}

// TestSecurePostgresPrefix: row-level security keeps the candidate to its
// key prefixes: a write elsewhere is refused with store.ErrPermission.
func TestSecurePostgresPrefix(t *testing.T) {
	writer, _, _ := securedServer{name: "postgres", env: "LEADERSHIP_POSTGRES_SECURE"}.urls(t)
	kv := openURL(t, writer)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kv.Put(ctx, "secure/prefix-check", []byte("ok"), nil); err != nil {
		t.Fatalf("a write under secure/: %v", err)
	}
	err := kv.Put(ctx, "elsewhere/prefix-check", []byte("no"), nil)
	if !errors.Is(err, lstore.ErrPermission) {
		t.Fatalf("a write outside the candidate's prefixes: %v, want store.ErrPermission", err)
	}
	t.Logf("refused: %v", err)
	if _, err := kv.Get(ctx, "elsewhere/prefix-check", nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("read outside the prefixes: %v, want ErrKeyNotFound", err)
	}
}
