package consul

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	kvconsul "github.com/kvtools/consul"
	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConfigValidation(t *testing.T) {
	storetest.RejectsConfigs(t, Open, storetest.ConfigRejected(errInvalidConfig), netConfig.Invalid("127.0.0.1:8500",
		storetest.InvalidConfig[Config]{Name: "two endpoints", Config: Config{Endpoints: []string{"127.0.0.1:8500", "127.0.0.1:8501"}}, Field: "Endpoints"},
	))
}

func TestConfigDefaults(t *testing.T) {
	st, err := Config{Endpoints: []string{"consul:8500"}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if st.dialTimeout != defaultDialTimeout || st.requestTimeout != defaultRequestTimeout || st.scheme != "http" {
		t.Fatalf("defaults not applied: %+v", st)
	}
	cfg := &tls.Config{ServerName: "consul"}
	st, err = Config{Endpoints: []string{"consul:8501"}, TLS: cfg}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if st.scheme != "https" || st.tls == cfg || st.tls.ServerName != "consul" {
		t.Fatalf("TLS: scheme %q, config %p (given %p)", st.scheme, st.tls, cfg)
	}
}

func TestOpenUnreachable(t *testing.T) {
	storetest.NoLeaks(t)
	storetest.OpenUnreachable(t, netConfig.Dialer(storetest.Erase(Open)), storetest.Unreachable{Names: storetest.NamesFirstEndpoint, WrapsDeadline: true})
}

// netConfig is the Config of endpoints and timeouts alone.
var netConfig storetest.NetConfig[Config] = func(endpoints []string, dial, request time.Duration) Config {
	return Config{Endpoints: endpoints, DialTimeout: dial, RequestTimeout: request}
}

// fakeAgent is an HTTPS server answering /v1/status/leader with leader,
// recording the tokens it receives.
type fakeAgent struct {
	srv    *httptest.Server
	mu     sync.Mutex
	tokens []string
}

func newFakeAgent(t *testing.T, leader string) *fakeAgent {
	f := &fakeAgent{}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.tokens = append(f.tokens, r.Header.Get("X-Consul-Token"))
		f.mu.Unlock()
		if r.URL.Path != "/v1/status/leader" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(leader)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAgent) tlsConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(f.srv.Certificate())
	return &tls.Config{RootCAs: pool}
}

// Open speaks HTTPS with the TLS configuration given, sends the token, and
// leaves http.DefaultClient and http.DefaultTransport alone.
func TestOpenTLSAndToken(t *testing.T) {
	storetest.NoLeaks(t)
	f := newFakeAgent(t, "10.0.0.1:8300")
	defaultTransport := http.DefaultClient.Transport
	s, err := Open(context.Background(), Config{
		Endpoints: []string{f.srv.Listener.Addr().String()},
		TLS:       f.tlsConfig(),
		Token:     "secret-token",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	tokens := f.tokens
	f.mu.Unlock()
	if len(tokens) == 0 || tokens[0] != "secret-token" {
		t.Errorf("tokens received: %q", tokens)
	}
	if http.DefaultClient.Transport != defaultTransport {
		t.Error("Open changed http.DefaultClient.Transport")
	}
	f.srv.CloseClientConnections()
}

// An agent without a cluster leader cannot serve consistent reads: Open
// fails within DialTimeout.
func TestOpenNoLeader(t *testing.T) {
	storetest.NoLeaks(t)
	f := newFakeAgent(t, "")
	start := time.Now()
	s, err := Open(context.Background(), Config{Endpoints: []string{f.srv.Listener.Addr().String()}, TLS: f.tlsConfig(), DialTimeout: 500 * time.Millisecond})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open succeeded")
	}
	took := time.Since(start)
	t.Logf("Open failed after %v: %v", took, err)
	if !errors.Is(err, errNoLeader) || !errors.Is(err, store.ErrNotReachable) || took > storetest.HangBound {
		t.Errorf("Open = %v after %v, want errNoLeader and store.ErrNotReachable after 500ms", err, took)
	}
	f.srv.CloseClientConnections()
}

// A TLS handshake with a plain HTTP agent fails, it does not hang.
func TestOpenTLSMismatch(t *testing.T) {
	addr := agent(t)
	storetest.NoLeaks(t)
	start := time.Now()
	s, err := Open(context.Background(), Config{Endpoints: []string{addr}, TLS: &tls.Config{}, DialTimeout: 2 * time.Second})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open succeeded")
	}
	t.Logf("Open with TLS against plain HTTP failed after %v: %v", time.Since(start), err)
}

// kvtools/consul with TLS replaces http.DefaultClient's transport, for the
// whole process (kept as evidence; the test restores it).
func TestKvtoolsMutatesDefaultClient(t *testing.T) {
	saved := http.DefaultClient.Transport
	t.Cleanup(func() { http.DefaultClient.Transport = saved })
	s, err := valkeyrie.NewStore(context.Background(), kvconsul.StoreName, []string{"127.0.0.1:1"}, &kvconsul.Config{TLS: &tls.Config{ServerName: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if http.DefaultClient.Transport == saved {
		t.Error("kvtools bug fixed? http.DefaultClient.Transport unchanged")
	} else {
		t.Logf("kvtools: http.DefaultClient.Transport is now %T with TLS ServerName %q", http.DefaultClient.Transport, http.DefaultClient.Transport.(*http.Transport).TLSClientConfig.ServerName)
	}
}

// A store whose agent stops answering after Open: calls return by their
// deadline, a watch can be cancelled, and Close leaves nothing running.
func TestCutAfterOpen(t *testing.T) {
	addr := agent(t)
	storetest.NoLeaks(t)
	fwd := electiontest.Forwarder(t, addr)
	s, err := Open(context.Background(), Config{Endpoints: []string{fwd.Addr()}, RequestTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	key := freshKey("cut")
	storetest.CleanupTree(t, openAgent(t), storetest.Dir(key))
	storetest.CutAfterOpen(t, s, key, fwd.Cut)
}
