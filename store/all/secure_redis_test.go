package all_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/open"
)

// TestSecureRedis runs the secured checks on the secured Redis server of
// scripts/secure/redis.sh: TLS only, client certificates required, ACL
// users leadership (candidate), leadership-reader (follower) and other.
func TestSecureRedis(t *testing.T) {
	runSecured(t, securedServer{
		name: "redis",
		env:  "LEADERSHIP_REDIS_SECURE",
		ttl:  2 * time.Second,
		bad:  redisBadConfigs,
	})
}

// redisBadConfigs are the broken configurations of the secured Redis
// server, each built from the candidate's URL.
func redisBadConfigs(t *testing.T, certs string) []badConfig {
	writer, _, other := securedServer{env: "LEADERSHIP_REDIS_SECURE"}.urls(t)
	spec, err := open.Parse(writer)
	if err != nil {
		t.Fatal(err)
	}
	pass := spec.Password
	ep := spec.Endpoints[0]
	file := func(name string) string { return filepath.Join(certs, name) }
	wrongPass := "wrong-" + pass[:8] + "-password"

	// A port where nothing listens, and servers that are not Redis: one
	// that only accepts connections (a plain-text server waiting for a
	// whole command), one with an expired certificate.
	nothing := storetest.RefusedAddr(t)
	silent := redisListen(t, nil)
	expired := redisListen(t, redisTLSServerConfig(t, file("expired-server.crt"), file("expired-server.key")))
	at := func(addr string, set map[string]string) string {
		return withParams(t, strings.Replace(writer, ep, addr, 1), set)
	}

	return []badConfig{
		{name: "unknown CA", url: withParams(t, writer, map[string]string{"ca": file("other-ca.crt")}),
			want: []string{"unknown authority"}, secret: pass, kind: lstore.ErrTLS},
		{name: "wrong client certificate", url: withParams(t, writer, map[string]string{"cert": file("other-client.crt"), "key": file("other-client.key")}),
			want: []string{"certificate"}, secret: pass, kind: lstore.ErrTLS},
		{name: "expired client certificate", url: withParams(t, writer, map[string]string{"cert": file("expired-client.crt"), "key": file("expired-client.key")}),
			want: []string{"expired"}, secret: pass, kind: lstore.ErrTLS},
		{name: "no client certificate", url: withParams(t, writer, map[string]string{"cert": "", "key": ""}),
			want: []string{"certificate"}, secret: pass, kind: lstore.ErrTLS},
		{name: "wrong server name", url: withParams(t, writer, map[string]string{"server_name": "wrong.example"}),
			want: []string{"wrong.example"}, secret: pass, kind: lstore.ErrTLS},
		{name: "wrong password", url: strings.Replace(writer, ":"+pass+"@", ":"+wrongPass+"@", 1),
			want: []string{"password"}, secret: wrongPass, kind: lstore.ErrAuth},
		{name: "unknown user", url: strings.Replace(writer, "//leadership:", "//nobody:", 1),
			want: []string{"password"}, secret: pass, kind: lstore.ErrAuth},
		{name: "no password", url: strings.Replace(writer, "leadership:"+pass+"@", "", 1),
			want: []string{"auth"}, kind: lstore.ErrAuth},
		{name: "missing permission", url: other,
			want: []string{"permission"}, secret: pass, kind: lstore.ErrPermission},
		{name: "plain text to the TLS port", url: strings.Replace(withParams(t, writer, map[string]string{"ca": "", "cert": "", "key": ""}), "rediss://", "redis://", 1),
			want: []string{"speaks TLS"}, secret: pass, kind: lstore.ErrTLS},
		{name: "TLS to nothing", url: at(nothing, nil),
			want: []string{"refused"}, secret: pass, kind: lstore.ErrUnreachable},
		{name: "TLS to a plain-text server", url: at(silent, nil),
			want: []string{"TLS"}, secret: pass, kind: lstore.ErrTLS},
		{name: "expired server certificate", url: at(expired, nil),
			want: []string{"expired"}, secret: pass, kind: lstore.ErrTLS},
	}
}

// redisListen serves on 127.0.0.1 until the end of the test: with cfg, TLS
// handshakes (then nothing); without, connections that are accepted and
// never answered.
func redisListen(t *testing.T, cfg *tls.Config) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg != nil {
		l = tls.NewListener(l, cfg)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if tc, ok := c.(*tls.Conn); ok {
					_ = tc.Handshake()
				}
				<-done
			}()
		}
	}()
	return l.Addr().String()
}

// redisTLSServerConfig serves the certificate in certFile and keyFile.
func redisTLSServerConfig(t *testing.T, certFile, keyFile string) *tls.Config {
	if _, err := os.Stat(certFile); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
}

// TestSecureRedisRights checks what each ACL user of the secured server
// may do, call by call: the follower's writes and the other identity's
// reads and writes of the election's keys are refused with the server's
// permission error, not reported as a conflict or an unreachable server, and
// nothing is written.
func TestSecureRedisRights(t *testing.T) {
	writer, reader, other := securedServer{name: "redis", env: "LEADERSHIP_REDIS_SECURE"}.urls(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	owner := openURL(t, writer)
	key := freshKey(t)
	if ok, _, err := owner.AtomicPut(ctx, key, []byte("owner"), nil, nil); !ok || err != nil {
		t.Fatalf("the candidate could not create its record: %v", err)
	}
	for _, id := range []struct {
		name, url string
		reads     bool
	}{{"reader", reader, true}, {"other", other, false}} {
		kv := openURL(t, id.url)
		refusedCall := func(op string, err error) {
			t.Helper()
			switch {
			case err == nil:
				t.Errorf("%s: %s was allowed", id.name, op)
			case !strings.Contains(err.Error(), "NOPERM") && !strings.Contains(err.Error(), "can't access") ||
				errors.Is(err, store.ErrNotReachable) || errors.Is(err, store.ErrKeyExists):
				// NOPERM for a command, "The user executing the script
				// can't access ..." for a script's redis.call
				t.Errorf("%s: %s: %v, want the server's refusal", id.name, op, err)
			default:
				t.Logf("%s: %s refused: %v", id.name, op, err)
			}
		}
		_, err := kv.Get(ctx, key, nil)
		if id.reads && err != nil {
			t.Errorf("%s: Get: %v", id.name, err)
		}
		if !id.reads {
			refusedCall("Get", err)
		}
		_, _, err = kv.AtomicPut(ctx, key+"-new", []byte(id.name), nil, nil)
		refusedCall("AtomicPut (create)", err)
		refusedCall("Put", kv.Put(ctx, key, []byte(id.name), nil))
		_, err = kv.AtomicDelete(ctx, key, &store.KVPair{Key: key, Value: []byte("owner")})
		refusedCall("AtomicDelete", err)
		refusedCall("Delete", kv.Delete(ctx, key))
		if fw, ok := kv.(fenced.Putter); ok {
			refusedCall("FencedPut", fw.FencedPut(ctx, key+"-data", []byte(id.name), key, &store.KVPair{Key: key, Value: []byte("owner")}))
		}
	}
	if p, err := owner.Get(ctx, key, nil); err != nil || string(p.Value) != "owner" {
		t.Errorf("the record after the refused writes: %v, %v", p, err)
	}
	if _, err := owner.Get(ctx, key+"-new", nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Errorf("a refused create left a key: %v", err)
	}
}
