package all_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/leadership-go/leadership/store/consul"
	"github.com/leadership-go/leadership/store/etcd"
	"github.com/leadership-go/leadership/store/open"
	"github.com/leadership-go/leadership/store/postgres"
	"github.com/leadership-go/leadership/store/redis"
	"github.com/leadership-go/leadership/store/zookeeper"
)

// The secrets of the tests below: none may appear in any output.
const (
	secretA = "Sl4sh3dPre"
	secretB = "fixSecret9"
	secretC = "Passphr4se"
)

var secrets = []string{secretA, secretB, secretC}

// encodings returns v as every encoding a user may log it in: %v, %+v,
// %#v, %s, String() if any, JSON, and slog's JSON and text handlers.
func encodings(t *testing.T, v any) map[string]string {
	t.Helper()
	out := map[string]string{
		"%v":  fmt.Sprintf("%v", v),
		"%+v": fmt.Sprintf("%+v", v),
		"%#v": fmt.Sprintf("%#v", v),
		"%s":  fmt.Sprintf("%s", v),
	}
	if s, ok := v.(fmt.Stringer); ok {
		out["String()"] = s.String()
	}
	if b, err := json.Marshal(v); err == nil {
		out["JSON"] = string(b)
	} else {
		out["JSON"] = err.Error()
	}
	var js, txt bytes.Buffer
	slog.New(slog.NewJSONHandler(&js, nil)).Info("x", "v", v)
	slog.New(slog.NewTextHandler(&txt, nil)).Info("x", "v", v)
	out["slog JSON"], out["slog text"] = js.String(), txt.String()
	return out
}

// noSecret fails when any secret appears in what.
func noSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			t.Errorf("%s shows the secret %q: %s", what, sec, s)
		}
	}
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestSecretsMaskedInSpec: for every backend, a URL's password, token,
// credential parameters (sslpassword) and ZooKeeper digests appear in none
// of the Spec's encodings, nor in the error of opening it against a port
// where nothing listens.
func TestSecretsMaskedInSpec(t *testing.T) {
	addr := closedPort(t)
	urls := map[string]string{
		"etcd":           "etcd://user:" + secretA + "@" + addr + "?dial_timeout=2s",
		"consul token":   "consul://" + secretA + "@" + addr + "?dial_timeout=2s",
		"consul param":   "consul://" + addr + "?token=" + secretA + "&dial_timeout=2s",
		"zookeeper":      "zk://user:" + secretA + "@" + addr + "?dial_timeout=1s&acl=digest:reader:" + secretB + "=:r",
		"redis":          "redis://user:" + secretA + "@" + addr + "?dial_timeout=2s",
		"rediss":         "rediss://:" + secretA + "@" + addr + "?dial_timeout=2s",
		"postgres":       "postgres://app:" + secretA + "@" + addr + "/db?sslmode=disable&connect_timeout=2&sslpassword=" + secretC,
		"postgres param": "postgres://app@" + addr + "/db?sslmode=disable&connect_timeout=2&password=" + secretB,
	}
	for name, raw := range urls {
		t.Run(name, func(t *testing.T) {
			spec, err := open.Parse(raw)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			for enc, s := range encodings(t, spec) {
				noSecret(t, "Spec "+enc, s)
			}
			for enc, s := range encodings(t, *spec) {
				noSecret(t, "Spec value "+enc, s)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			kv, err := spec.Open(ctx)
			if err == nil {
				_ = kv.Close()
				t.Fatal("opened a store where nothing listens")
			}
			noSecret(t, "Open's error", err.Error())
			noSecret(t, "Open's error %+v", fmt.Sprintf("%+v", err))
			t.Logf("%s: %v", spec, err)
		})
	}
}

// TestSecretsMaskedInConfigs: the adapters' Config types show no Password,
// Token, DSN secret or ZooKeeper digest in any encoding.
func TestSecretsMaskedInConfigs(t *testing.T) {
	configs := map[string]any{
		"etcd":               etcd.Config{Endpoints: []string{"h:2379"}, Username: "u", Password: secretA},
		"consul":             consul.Config{Endpoints: []string{"h:8500"}, Token: secretA},
		"zookeeper":          zookeeper.Config{Endpoints: []string{"h:2181"}, Username: "u", Password: secretA, ACL: []zk.ACL{{Perms: zk.PermRead, Scheme: "digest", ID: "reader:" + secretB}}},
		"redis":              redis.Config{Endpoints: []string{"h:6379"}, Password: secretA},
		"postgres":           postgres.Config{DSN: "postgres://app:" + secretA + "@h/db?sslmode=verify-full&sslpassword=" + secretC},
		"postgres key/value": postgres.Config{DSN: "host=h user=app password='" + secretA + "' sslpassword=" + secretC},
		"postgres malformed": postgres.Config{DSN: "postgres://app:" + secretA + "/" + secretB + "@h:5432/db"},
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			for enc, s := range encodings(t, cfg) {
				noSecret(t, enc, s)
			}
			for enc, s := range encodings(t, &cfg) {
				noSecret(t, "pointer "+enc, s)
			}
			t.Logf("%+v", cfg)
		})
	}
	// The malformed DSN given to the adapter itself: its error shows none.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := postgres.Open(ctx, postgres.Config{DSN: "postgres://app:" + secretA + "?" + secretB + "@h:5432/db?sslpassword=" + secretC + "&port=x"})
	if err == nil {
		t.Fatal("a malformed DSN opened")
	}
	noSecret(t, "postgres.Open's error", err.Error())
	t.Logf("postgres.Open: %v", err)
}

// TestUnescapedPasswordRefused: a password (or Consul token) holding an
// unescaped "/" or "?" makes the URL malformed for every backend: the error
// shows no part of it, and nothing is dialed.
func TestUnescapedPasswordRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	var urls []string
	for _, scheme := range []string{"etcd", "consul", "zk", "redis", "rediss", "postgres"} {
		for _, sep := range []string{"/", "?"} {
			urls = append(urls, scheme+"://user:"+secretA+sep+secretB+"@"+addr+"/db?x=1")
			urls = append(urls, scheme+"://"+secretA+sep+secretB+"@"+addr)
		}
	}
	urls = append(urls, "no-scheme:"+secretA+"@"+addr, "etcd://user:"+secretA+"%zz@"+addr, "etcd://"+addr+"?password="+secretA+"%zz")
	for _, raw := range urls {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		kv, err := open.Store(ctx, raw)
		cancel()
		if err == nil {
			_ = kv.Close()
			t.Errorf("opened a malformed URL")
			continue
		}
		if !errors.Is(err, open.ErrInvalidURL) {
			t.Errorf("error %v: not ErrInvalidURL", err)
		}
		noSecret(t, "error", err.Error())
		noSecret(t, "error %+v", fmt.Sprintf("%+v", err))
		if _, perr := open.Parse(raw); perr == nil {
			t.Errorf("Parse accepted a malformed URL")
		}
	}
	// Nothing connected to the listener.
	_ = ln.(*net.TCPListener).SetDeadline(time.Now())
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("a malformed URL was dialed")
	}
}

// TestNoInsecureSkipVerifyParam: no URL turns server verification off;
// insecure_skip_verify is an unknown parameter of every TLS backend.
func TestNoInsecureSkipVerifyParam(t *testing.T) {
	for _, scheme := range []string{"etcd", "consul", "zk", "redis", "rediss"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		kv, err := open.Store(ctx, scheme+"://127.0.0.1:1?tls=true&insecure_skip_verify=true")
		cancel()
		if err == nil {
			_ = kv.Close()
		}
		var ce *open.ConfigError
		if !errors.As(err, &ce) || ce.Field != "insecure_skip_verify" {
			t.Errorf("%s with insecure_skip_verify=true: %v, want it refused as an unknown parameter", scheme, err)
		}
	}
}

// TestMalformedURLsMaskPassword: a malformed URL of every backend that
// carries a password (a typo'd host, a bad port, a malformed escape, an
// "@host" left out, which makes the password a port) shows it in no error
// of Parse or Store, nor in the Spec, and nothing is dialed (issue 32).
func TestMalformedURLsMaskPassword(t *testing.T) {
	var urls []string
	for _, scheme := range []string{"etcd", "consul", "zk", "redis", "rediss", "postgres"} {
		for _, rest := range []string{
			"user:" + secretA + "@%zz/db",
			"user:" + secretA + "@[::1/db",
			"user:" + secretA + "@[127.0.0.1",
			"user:" + secretA + "@127.0.0.1:99999",
			"user:" + secretA + "@127.0.0.1:port",
			"user:" + secretA + "%zz@127.0.0.1:1",
			"user:" + secretA + "/db",
			"user:" + secretA,
			":" + secretA + "/0",
			"user:pa:" + secretA + "/db",
			"127.0.0.1:1,user:" + secretA,
		} {
			urls = append(urls, scheme+"://"+rest)
		}
	}
	for _, raw := range urls {
		if spec, err := open.Parse(raw); err != nil {
			noSecret(t, "Parse's error", err.Error())
		} else {
			for enc, s := range encodings(t, spec) {
				noSecret(t, "Spec "+enc, s)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		kv, err := open.Store(ctx, raw)
		cancel()
		if err == nil {
			_ = kv.Close()
			t.Errorf("opened a malformed URL")
			continue
		}
		noSecret(t, "Store's error", err.Error())
		noSecret(t, "Store's error %+v", fmt.Sprintf("%+v", err))
		noSecret(t, "Store's error %#v", fmt.Sprintf("%#v", err))
		t.Log(err)
	}
}
