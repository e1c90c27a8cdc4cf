package etcd

import (
	"context"
	"crypto/tls"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kvtools/etcdv3"
	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/zap/zapcore"

	"github.com/leadership-go/leadership/store/internal/guard"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// kvOf returns the kvtools store inside a store returned by Open or Wrap.
func kvOf(t *testing.T, s store.Store) *etcdv3.Store {
	t.Helper()
	inner := guard.Unwrap(s)
	if inner == nil {
		t.Fatalf("store is a %T", s)
	}
	kv, ok := inner.(*fixed).Store.(*etcdv3.Store)
	if !ok {
		t.Fatalf("inner store is a %T", inner.(*fixed).Store)
	}
	return kv
}

func TestConfigValidation(t *testing.T) {
	storetest.RejectsConfigs(t, Open, storetest.ConfigRejected(errInvalidConfig), netConfig.Invalid("127.0.0.1:2379",
		storetest.InvalidConfig[Config]{Name: "user without password", Config: Config{Endpoints: []string{"127.0.0.1:2379"}, Username: "u"}, Field: "Username"},
		storetest.InvalidConfig[Config]{Name: "password without user", Config: Config{Endpoints: []string{"127.0.0.1:2379"}, Password: "p"}, Field: "Username"},
	))

	cfg, err := Config{Endpoints: []string{"a:1", "[::1]:2"}}.validate()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DialTimeout != defaultDialTimeout || cfg.RequestTimeout != defaultRequestTimeout {
		t.Fatalf("defaults: %+v", cfg)
	}
}

// namesEndpoints reports whether err is an *unreachableError naming every
// one of endpoints.
func namesEndpoints(err error, endpoints []string) bool {
	var ue *unreachableError
	if !errors.As(err, &ue) {
		return false
	}
	for _, ep := range endpoints {
		if !slices.Contains(ue.Endpoints, ep) {
			return false
		}
	}
	return true
}

func TestOpenUnreachable(t *testing.T) {
	storetest.OpenUnreachable(t, netConfig.Dialer(storetest.Erase(Open)), storetest.Unreachable{Names: namesEndpoints, WrapsDeadline: true})
}

// netConfig is the Config of endpoints and timeouts alone.
var netConfig storetest.NetConfig[Config] = func(endpoints []string, dial, request time.Duration) Config {
	return Config{Endpoints: endpoints, DialTimeout: dial, RequestTimeout: request}
}

// With Username set, etcdv3.New authenticates before returning, bounded only
// by its ConnectionTimeout; Open sets it from DialTimeout.
func TestOpenWithUsernameIsBounded(t *testing.T) {
	target := serverConfig(t).Endpoints[0]

	// Before: kvtools alone, no ConnectionTimeout, against a hung server:
	// New does not return until the server answers.
	addr, release := storetest.GatedAddr(t, target)
	var kv *etcdv3.Store
	done := storetest.Blocked(t, "etcdv3.New with Username against a hung server", func() (err error) {
		kv, err = etcdv3.New(context.Background(), []string{addr}, &etcdv3.Config{Username: "u", Password: "p"})
		return err
	})
	release() // the server answers (auth is not enabled on it): New returns
	if err := <-done; err != nil {
		t.Fatalf("etcdv3.New after release: %v", err)
	}
	_ = kv.Close()

	// After: Open is bounded by DialTimeout.
	addr, _ = storetest.GatedAddr(t, target)
	storetest.ExpectUnreachable(t, []string{addr}, storetest.HangBound, namesEndpoints, func() (store.Store, error) {
		return Open(context.Background(), Config{Endpoints: []string{addr}, Username: "u", Password: "p", DialTimeout: 500 * time.Millisecond})
	})
}

// The credentials reach the etcd client. The test server has auth disabled,
// which the client accepts.
func TestOpenPassesCredentials(t *testing.T) {
	cfg := serverConfig(t)
	cfg.Username, cfg.Password = "leader", "secret"
	s := openClient(t, cfg)
	c := clientOf(kvOf(t, s))
	if c == nil || c.Username != "leader" || c.Password != "secret" {
		t.Fatalf("client credentials not set: %+v", c)
	}
}

// TLS is used when configured: against the plaintext test server the
// handshake fails and Open reports the server unreachable.
func TestOpenTLS(t *testing.T) {
	addr := serverConfig(t).Endpoints[0]
	storetest.ExpectUnreachable(t, []string{addr}, storetest.HangBound, namesEndpoints, func() (store.Store, error) {
		return Open(context.Background(), Config{Endpoints: []string{addr}, TLS: &tls.Config{InsecureSkipVerify: true}, DialTimeout: 500 * time.Millisecond}) //nolint:gosec // test against a plaintext server
	})
}

// The etcd client logs a JSON line to stderr at every failed attempt by
// default; Open's client logs nothing.
func TestQuiet(t *testing.T) {
	addr := storetest.RefusedAddr(t)
	kv, err := etcdv3.New(context.Background(), []string{addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	c := clientOf(kv)
	if c == nil || !layoutKnown() {
		t.Fatal("kvtools' etcd client not found: the layout of etcdv3.Store changed (newKV falls back to etcdv3.New, which logs while authenticating)")
	}
	if !c.GetLogger().Core().Enabled(zapcore.WarnLevel) {
		t.Fatal("before: the default logger does not log warnings")
	}
	if !quiet(kv) {
		t.Fatal("quiet failed")
	}
	if c.GetLogger().Core().Enabled(zapcore.ErrorLevel) {
		t.Fatal("after: the logger still logs")
	}

	s := openClient(t, serverConfig(t))
	if clientOf(kvOf(t, s)).GetLogger().Core().Enabled(zapcore.ErrorLevel) {
		t.Fatal("Open's client logs")
	}
}

// kvtools' Delete has no timeout of its own: with a context without
// deadline it waits for the server for ever. Wrap bounds it.
func TestDeleteBounded(t *testing.T) {
	addr := storetest.HungAddr(t)
	kv, err := etcdv3.New(context.Background(), []string{addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	quiet(kv)

	// Before.
	ctx, cancel := context.WithCancel(context.Background())
	done := storetest.Blocked(t, "raw Delete", func() error { return kv.Delete(ctx, "k") })
	cancel()
	<-done

	// After.
	s := wrap(kv, 300*time.Millisecond)
	defer s.Close()
	start := time.Now()
	err = s.Delete(context.Background(), "k")
	if !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("wrapped Delete: %v", err)
	}
	took := time.Since(start)
	t.Logf("after: wrapped Delete returned after %v: %v", took.Round(time.Millisecond), err)
	if took > storetest.HangBound {
		t.Fatalf("wrapped Delete returned after %v: hung", took)
	}

	// Every other call is bounded and classified too.
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Get(ctx, "k", nil); !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("Get: %v", err)
	}
	if _, _, err := s.AtomicPut(context.Background(), "k", []byte("v"), nil, nil); !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("AtomicPut: %v", err)
	}
	start = time.Now()
	if _, err := s.Watch(context.Background(), "k", nil); !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("Watch: %v", err)
	}
	took = time.Since(start)
	t.Logf("Watch setup returned after %v", took.Round(time.Millisecond))
	if took > storetest.HangBound {
		t.Fatalf("Watch setup returned after %v: hung", took)
	}
}

func TestClassify(t *testing.T) {
	for _, err := range []error{store.ErrKeyNotFound, store.ErrKeyModified, store.ErrKeyExists, context.Canceled} {
		if got := classify(err); got != err {
			t.Errorf("classify(%v) = %v", err, got)
		}
	}
	if got := classify(context.DeadlineExceeded); !errors.Is(got, store.ErrNotReachable) || !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("classify(DeadlineExceeded) = %v", got)
	}
}

// A watch opened on an existing key reports its deletion (as an empty
// value) and keeps reporting after the key is created again.
func TestWatchSurvivesDeleteAndRecreate(t *testing.T) {
	s := openClient(t, serverConfig(t))
	other := openClient(t, serverConfig(t))
	key := uniqueKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer func() { _ = other.Delete(context.Background(), key) }()

	if _, err := s.Watch(ctx, key, nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("Watch of a missing key: %v, want ErrKeyNotFound", err)
	}
	if err := other.Put(ctx, key, []byte("v1"), nil); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	ch, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(what, want string) {
		t.Helper()
		p, ok := storetest.Recv(ch, 5*time.Second)
		for ok && p != nil && string(p.Value) == "probe" {
			p, ok = storetest.Recv(ch, 5*time.Second) // a late event of the probe below
		}
		if !ok || p == nil || string(p.Value) != want {
			t.Fatalf("%s: got %+v (ok %v), want value %q", what, p, ok, want)
		}
	}
	expect("current value", "v1")
	// kvtools starts the etcd watch only after the first event is read,
	// from the revision of that moment: write until a write is reported.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := other.Put(ctx, key, []byte("probe"), nil); err != nil {
			t.Fatal(err)
		}
		if p, ok := storetest.Recv(ch, 100*time.Millisecond); ok && p != nil && string(p.Value) == "probe" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch reported no write within 10s")
		}
	}
	if err := other.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	expect("delete", "")
	if _, _, err := other.AtomicPut(ctx, key, []byte("v2"), nil, nil); err != nil {
		t.Fatal(err)
	}
	expect("re-create", "v2")
	if err := other.Put(ctx, key, []byte("v3"), nil); err != nil {
		t.Fatal(err)
	}
	expect("update", "v3")

	wcancel()
	if !storetest.Closes(ch, storetest.HangBound) {
		t.Fatal("watch channel not closed after cancel")
	}
}

// The election engine's calls, against the live server: create, CAS,
// stale CAS, CAS on a missing key, and a pair whose Value is exactly what
// was written.
func TestAtomicPutContract(t *testing.T) {
	s := openClient(t, serverConfig(t))
	key := uniqueKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer func() { _ = s.Delete(context.Background(), key) }()

	ok, p1, err := s.AtomicPut(ctx, key, []byte("a"), nil, nil)
	if err != nil || !ok || string(p1.Value) != "a" || p1.LastIndex == 0 {
		t.Fatalf("create: %v %+v %v", ok, p1, err)
	}
	if _, _, err := s.AtomicPut(ctx, key, []byte("b"), nil, nil); !errors.Is(err, store.ErrKeyExists) {
		t.Fatalf("second create: %v", err)
	}
	got, err := s.Get(ctx, key, &store.ReadOptions{Consistent: true})
	if err != nil || got.LastIndex != p1.LastIndex {
		t.Fatalf("Get: %+v %v", got, err)
	}
	ok, p2, err := s.AtomicPut(ctx, key, []byte("b"), got, nil)
	if err != nil || !ok || string(p2.Value) != "b" || p2.LastIndex <= p1.LastIndex {
		t.Fatalf("CAS: %v %+v %v", ok, p2, err)
	}
	if _, _, err := s.AtomicPut(ctx, key, []byte("c"), got, nil); !errors.Is(err, store.ErrKeyModified) {
		t.Fatalf("stale CAS: %v", err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AtomicPut(ctx, key, []byte("c"), p2, nil); !errors.Is(err, store.ErrKeyModified) && !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("CAS on a deleted key: %v", err)
	}
}

// A dead member among the endpoints does not prevent Open.
func TestOpenWithADeadMember(t *testing.T) {
	eps := append(endpointsFrom(t, envCluster), storetest.RefusedAddr(t))
	s := openClient(t, Config{Endpoints: eps, DialTimeout: 2 * time.Second})
	key := uniqueKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer func() { _ = s.Delete(context.Background(), key) }()
	for range 10 { // the client balances over the endpoints
		if err := s.Put(ctx, key, []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// Wrap works on a store built by valkeyrie.
func TestWrapValkeyrieStore(t *testing.T) {
	cfg := serverConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := valkeyrie.NewStore(ctx, etcdv3.StoreName, cfg.Endpoints, &etcdv3.Config{ConnectionTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := wrap(kv, time.Second)
	defer s.Close()
	key := uniqueKey(t)
	defer func() { _ = s.Delete(context.Background(), key) }()
	if ok, p, err := s.AtomicPut(ctx, key, []byte("v"), nil, nil); err != nil || !ok || p.LastIndex == 0 {
		t.Fatalf("AtomicPut: %v %+v %v", ok, p, err)
	}
	if p, err := s.Get(ctx, key, nil); err != nil || string(p.Value) != "v" {
		t.Fatalf("Get: %+v %v", p, err)
	}
}
