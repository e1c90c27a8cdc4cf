package all_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/consul"
	"github.com/leadership-go/leadership/store/open"
)

// TestSecureConsul runs the secured checks on the consul-secure agent of
// scripts/secure/consul.sh: HTTPS only, client certificates required, ACLs
// denying by default; the candidate's token may write "leadershiptest/"
// and "secure/", the reader's only read them, the other's has no rights
// there.
func TestSecureConsul(t *testing.T) {
	runSecured(t, securedServer{
		name: "consul",
		env:  "LEADERSHIP_CONSUL_SECURE",
		ttl:  2 * time.Second,
		bad:  consulBadConfigs,
	})
}

// consulBadConfigs are the candidate's URL with one thing wrong each.
func consulBadConfigs(t *testing.T, certs string) []badConfig {
	writer, _, other := securedServer{env: "LEADERSHIP_CONSUL_SECURE"}.urls(t)
	spec, err := open.Parse(writer)
	if err != nil {
		t.Fatal(err)
	}
	host := spec.Endpoints[0]
	token := spec.Params.Get("token")
	otherToken := ""
	if o, err := open.Parse(other); err == nil {
		otherToken = o.Params.Get("token")
	}
	file := func(name string) string { return filepath.Join(certs, name) }
	const wrongToken = "5f0c2b1e-0d59-4c6a-9d0e-6a1b2c3d4e5f"
	bad := []badConfig{
		{name: "unknown CA", url: withParams(t, writer, map[string]string{"ca": file("other-ca.crt")}),
			want: []string{"agent's TLS certificate is not trusted", "unknown authority"}, secret: token, kind: lstore.ErrTLS},
		{name: "wrong client certificate", url: withParams(t, writer, map[string]string{"cert": file("other-client.crt"), "key": file("other-client.key")}),
			want: []string{"refused the client certificate", "issued by a CA the agent trusts"}, secret: token, kind: lstore.ErrTLS},
		{name: "expired client certificate", url: withParams(t, writer, map[string]string{"cert": file("expired-client.crt"), "key": file("expired-client.key")}),
			want: []string{"refused the client certificate", "expired"}, secret: token, kind: lstore.ErrTLS},
		{name: "no client certificate", url: withParams(t, writer, map[string]string{"cert": "", "key": ""}),
			want: []string{"requires a client certificate and none was given"}, secret: token, kind: lstore.ErrTLS},
		{name: "wrong token", url: withParams(t, writer, map[string]string{"token": wrongToken}),
			want: []string{"ACL token", "not known"}, secret: wrongToken, kind: lstore.ErrAuth},
		{name: "wrong token in the user information", url: strings.Replace(withParams(t, writer, map[string]string{"token": ""}), "consul://", "consul://"+wrongToken+"@", 1),
			want: []string{"ACL token", "not known"}, secret: wrongToken, kind: lstore.ErrAuth},
		{name: "missing permission", url: other,
			want: []string{"permission denied", `key:read on "secure/probe"`}, secret: otherToken, kind: lstore.ErrPermission},
		{name: "no token", url: withParams(t, writer, map[string]string{"token": ""}),
			want: []string{"permission denied", "no ACL token was given", "key:read"}, kind: lstore.ErrPermission},
		{name: "plain HTTP to the HTTPS port", url: "consul://" + host + "?token=" + token,
			want: []string{"speaks TLS"}, secret: token, kind: lstore.ErrTLS},
		{name: "expired server certificate", url: strings.Replace(writer, host, expiredServer(t, certs), 1),
			want: []string{"agent's TLS certificate is not trusted", "expired"}, secret: token, kind: lstore.ErrTLS},
	}
	if plain := os.Getenv("LEADERSHIP_CONSUL"); plain != "" {
		bad = append(bad, badConfig{name: "TLS to the plaintext agent",
			url:  strings.Replace(writer, host, plain, 1),
			want: []string{"does not speak TLS"}, secret: token, kind: lstore.ErrTLS})
	}
	return bad
}

// expiredServer is the address of an HTTPS server, for the test's
// duration, that presents expired-server.crt (signed by the test CA).
func expiredServer(t *testing.T, certs string) string {
	pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "expired-server.crt"), filepath.Join(certs, "expired-server.key"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`"127.0.0.1:8300"`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// The errors are typed: a missing right and an unknown token are
// *consul.ACLError matching store.ErrPermission and store.ErrAuth;
// certificate problems match store.ErrTLS and say whose certificate is at
// fault (and store.ErrNotReachable, as every failed handshake).
func TestSecureConsulErrorsAreTyped(t *testing.T) {
	writer, _, other := securedServer{name: "consul", env: "LEADERSHIP_CONSUL_SECURE"}.urls(t)
	certs := os.Getenv("LEADERSHIP_CERTS")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	firstError := func(url string) error {
		kv, err := open.Store(ctx, url)
		if err != nil {
			return err
		}
		defer kv.Close()
		_, err = kv.Get(ctx, "secure/probe", nil)
		return err
	}
	var acl *consul.ACLError
	if err := firstError(other); !errors.Is(err, lstore.ErrPermission) || !errors.As(err, &acl) || acl.Permission != "key:read" {
		t.Errorf("OTHER reading: %v, want an *ACLError matching store.ErrPermission for key:read", err)
	}
	wrong := strings.Replace(writer, "token=", "token=0", 1)
	if err := firstError(wrong); !errors.Is(err, lstore.ErrAuth) || !errors.As(err, &acl) {
		t.Errorf("a wrong token: %v, want an *ACLError matching store.ErrAuth", err)
	}
	if certs == "" {
		t.Fatal("LEADERSHIP_CERTS is not set (scripts/servers.sh env)")
	}
	if err := firstError(strings.Replace(writer, filepath.Join(certs, "ca.crt"), filepath.Join(certs, "other-ca.crt"), 1)); !errors.Is(err, lstore.ErrTLS) ||
		!strings.Contains(fmt.Sprint(err), "the agent's TLS certificate is not trusted") {
		t.Errorf("an unknown CA: %v, want store.ErrTLS, the agent's certificate at fault", err)
	}
	if err := firstError(strings.ReplaceAll(writer, filepath.Join(certs, "client."), filepath.Join(certs, "expired-client."))); !errors.Is(err, lstore.ErrTLS) ||
		!strings.Contains(fmt.Sprint(err), "the agent refused the client certificate") {
		t.Errorf("an expired client certificate: %v, want store.ErrTLS, the client certificate at fault", err)
	}
}

// The ACL token given as the user information of a consul:// URL is
// masked wherever the URL is shown.
func TestConsulTokenMasked(t *testing.T) {
	const secret = "5f0c2b1e-0d59-4c6a-9d0e-6a1b2c3d4e5f"
	for _, raw := range []string{
		"consul://" + secret + "@127.0.0.1:8500",
		"consul://anything:" + secret + "@127.0.0.1:8500",
		"consul://127.0.0.1:8500?token=" + secret + "&tls=true",
	} {
		s, err := open.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.String(); strings.Contains(got, secret) || !strings.Contains(got, "xxxxx") {
			t.Errorf("%s shows the token or masks nothing", got)
		}
	}
}
