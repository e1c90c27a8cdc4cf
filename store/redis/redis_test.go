package redis

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	kvredis "github.com/kvtools/redis"
	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestConfigValidation(t *testing.T) {
	storetest.RejectsConfigs(t, Open, storetest.ConfigRejected(errInvalidConfig), netConfig.Invalid("127.0.0.1:6379",
		storetest.InvalidConfig[Config]{Name: "two endpoints", Config: Config{Endpoints: []string{"127.0.0.1:6379", "127.0.0.1:6380"}}, Field: "Endpoints"},
		storetest.InvalidConfig[Config]{Name: "redis scheme", Config: Config{Endpoints: []string{"redis://127.0.0.1:6379"}}, Field: "Endpoints"},
		storetest.InvalidConfig[Config]{Name: "negative DB", Config: Config{Endpoints: []string{"127.0.0.1:6379"}, DB: -1}, Field: "DB"},
	))
	cfg, err := Config{Endpoints: []string{"[::1]:6379"}}.validate()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DialTimeout != defaultDialTimeout || cfg.RequestTimeout != defaultRequestTimeout {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestOpenUnreachable(t *testing.T) {
	storetest.OpenUnreachable(t, netConfig.Dialer(storetest.Erase(Open)), storetest.Unreachable{Names: storetest.NamesFirstEndpoint})
}

// netConfig is the Config of endpoints and timeouts alone.
var netConfig storetest.NetConfig[Config] = func(endpoints []string, dial, request time.Duration) Config {
	return Config{Endpoints: endpoints, DialTimeout: dial, RequestTimeout: request}
}

// kvtools' constructor sends CONFIG SET with a 30s socket timeout and no
// regard for its context's deadline.
func TestKvtoolsConstructorHangs(t *testing.T) {
	p := electiontest.Forwarder(t, serverConfig(t).Endpoints[0])
	p.Cut()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var kv *kvredis.Store
	done := storetest.Blocked(t, "kvredis.New with a 200ms context against a hung server", func() (err error) {
		kv, err = kvredis.New(ctx, []string{p.Addr()}, nil)
		return err
	})
	_ = p.Close()
	<-done
	if kv != nil {
		_ = kv.Close()
	}
}

// The credentials and the database reach the server.
func TestOpenPassesCredentialsAndDB(t *testing.T) {
	cfg := serverConfig(t)
	// The test server's default user takes any password: use a user that
	// does not exist.
	bad := cfg
	bad.Username, bad.Password = "no-such-user", "wrong"
	s, err := Open(context.Background(), bad)
	if err == nil {
		_ = s.Close()
		t.Fatal("Open as a user that does not exist succeeded")
	}
	if errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("an answer of the server classified as unreachable: %v", err)
	}
	t.Logf("unknown user: %v", err)

	bad = cfg
	bad.DB = 100000
	if s, err := Open(context.Background(), bad); err == nil || errors.Is(err, store.ErrNotReachable) {
		if s != nil {
			_ = s.Close()
		}
		t.Fatalf("bad DB: %v", err)
	}

	cfg9 := cfg
	cfg9.DB = 9
	s9, s0 := openClient(t, cfg9), openClient(t, cfg)
	key := uniqueKey(t)
	ctx := context.Background()
	if err := s9.Put(ctx, key, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s9.Delete(ctx, key) }()
	if _, err := s0.Get(ctx, key, nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("a key written in DB 9 read in DB 0: %v", err)
	}
	if p, err := s9.Get(ctx, key, nil); err != nil || string(p.Value) != "x" {
		t.Fatalf("DB 9: %+v %v", p, err)
	}
}

// TLS is used when configured: against the plaintext test server the
// handshake fails.
func TestOpenTLS(t *testing.T) {
	addr := serverConfig(t).Endpoints[0]
	start := time.Now()
	s, err := Open(context.Background(), Config{Endpoints: []string{addr}, TLS: &tls.Config{InsecureSkipVerify: true}, DialTimeout: 500 * time.Millisecond}) //nolint:gosec // test against a plaintext server
	if err == nil {
		_ = s.Close()
		t.Fatal("Open with TLS against a plaintext server succeeded")
	}
	took := time.Since(start)
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
	if took > storetest.HangBound {
		t.Fatalf("Open returned after %v: hung", took)
	}
}

// kvtools' AtomicPut(previous == nil) reports any failure of its SETNX as
// ErrKeyExists; the wrapped store reports it as an unreachable server.
func TestCreateFailureNotMaskedAsExists(t *testing.T) {
	cfg := serverConfig(t)
	ctx := context.Background()
	key := uniqueKey(t)

	// Before: raw kvtools, server gone.
	p := electiontest.Forwarder(t, cfg.Endpoints[0])
	kv, err := kvredis.New(ctx, []string{p.Addr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if _, err := kv.Get(ctx, key, nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("Get: %v", err)
	}
	_ = p.Close()
	_, _, err = kv.AtomicPut(ctx, key, []byte(`{"LastIndex":"a"}`), nil, nil)
	if !errors.Is(err, store.ErrKeyExists) {
		t.Fatalf("before: raw AtomicPut against a dead server: %v, expected kvtools' ErrKeyExists", err)
	}
	t.Logf("before: raw AtomicPut(nil) against a dead server: %v", err)

	// After.
	p = electiontest.Forwarder(t, cfg.Endpoints[0])
	s := openClient(t, Config{Endpoints: []string{p.Addr()}, RequestTimeout: 5 * time.Second})
	if _, err := s.Get(ctx, key, nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("Get: %v", err)
	}
	_ = p.Close()
	_, _, err = s.AtomicPut(ctx, key, []byte(`{"LastIndex":"a"}`), nil, nil)
	if errors.Is(err, store.ErrKeyExists) || !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("after: wrapped AtomicPut against a dead server: %v", err)
	}
	t.Logf("after: wrapped AtomicPut(nil) against a dead server: %v", err)

	// A key that exists is still ErrKeyExists, kvtools' own value.
	live := openClient(t, cfg)
	defer func() { _ = live.Delete(ctx, key) }()
	if _, _, err := live.AtomicPut(ctx, key, []byte(`{"LastIndex":"a"}`), nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := live.AtomicPut(ctx, key, []byte(`{"LastIndex":"b"}`), nil, nil); err != store.ErrKeyExists { //nolint:errorlint // identity kept
		t.Fatalf("create over an existing key: %v", err)
	}
}

// scripted is an inner store whose AtomicPut and Get return given errors.
type scripted struct {
	store.Store
	putErr, getErr error
}

func (s *scripted) AtomicPut(context.Context, string, []byte, *store.KVPair, *store.WriteOptions) (bool, *store.KVPair, error) {
	return false, nil, s.putErr
}

func (s *scripted) Get(context.Context, string, *store.ReadOptions) (*store.KVPair, error) {
	if s.getErr != nil {
		return nil, s.getErr
	}
	return &store.KVPair{Value: []byte("v")}, nil
}

func TestCreateConfirmation(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		getErr error
		check  func(error) bool
	}{
		{"key exists", nil, func(err error) bool { return err == store.ErrKeyExists }}, //nolint:errorlint // identity kept
		{"key missing", store.ErrKeyNotFound, func(err error) bool {
			return errors.Is(err, errCreateUnconfirmed) && errors.Is(err, store.ErrNotReachable) && !errors.Is(err, store.ErrKeyExists)
		}},
		{"read fails", errors.New("boom"), func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "boom") && !errors.Is(err, store.ErrKeyExists)
		}},
		{"read times out", fmt.Errorf("i/o: %w", context.DeadlineExceeded), func(err error) bool {
			return errors.Is(err, store.ErrNotReachable) && !errors.Is(err, store.ErrKeyExists)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixed(&scripted{putErr: store.ErrKeyExists, getErr: tc.getErr}, 0)
			_, _, err := f.AtomicPut(ctx, "k", []byte("v"), nil, nil)
			if !tc.check(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	// With previous, errors pass unchanged.
	f := newFixed(&scripted{putErr: store.ErrKeyModified}, 0)
	if _, _, err := f.AtomicPut(ctx, "k", []byte("v"), &store.KVPair{}, nil); err != store.ErrKeyModified { //nolint:errorlint // identity kept
		t.Fatalf("CAS: %v", err)
	}
}

// kvtools' CAS compares the top-level "LastIndex" member of the stored and
// the previous JSON values. The election engine's records carry a unique
// token there, which makes it exact.
func TestCASComparesLastIndexMember(t *testing.T) {
	s := openClient(t, serverConfig(t))
	ctx := context.Background()
	key := uniqueKey(t)
	defer func() { _ = s.Delete(ctx, key) }()

	v1 := []byte(`{"v":1,"leader":"a","term":1,"seq":0,"LastIndex":"0.1.0.aaaa"}`)
	ok, p1, err := s.AtomicPut(ctx, key, v1, nil, nil)
	if err != nil || !ok {
		t.Fatalf("create: %v %v", ok, err)
	}
	// The reply carries exactly what was written, and a non-zero index
	// (meaningless: the nanoseconds of the clock).
	if !bytes.Equal(p1.Value, v1) || p1.LastIndex == 0 {
		t.Fatalf("create reply: %+v", p1)
	}
	got, err := s.Get(ctx, key, &store.ReadOptions{Consistent: true})
	if err != nil || !bytes.Equal(got.Value, v1) {
		t.Fatalf("Get: %+v %v", got, err)
	}
	if got.LastIndex != 0 {
		t.Fatalf("Get reports LastIndex %d; kvtools' raw codec was expected to report 0", got.LastIndex)
	}
	v2 := []byte(`{"v":1,"leader":"a","term":1,"seq":1,"LastIndex":"0.1.1.bbbb"}`)
	ok, p2, err := s.AtomicPut(ctx, key, v2, got, nil)
	if err != nil || !ok || !bytes.Equal(p2.Value, v2) {
		t.Fatalf("CAS: %v %+v %v", ok, p2, err)
	}
	// A CAS against the pair as first read (stale), whichever index it
	// carries, fails.
	v3 := []byte(`{"v":1,"leader":"b","term":2,"seq":0,"LastIndex":"0.2.0.cccc"}`)
	for _, prev := range []*store.KVPair{got, p1} {
		if _, _, err := s.AtomicPut(ctx, key, v3, prev, nil); err != store.ErrKeyModified { //nolint:errorlint // identity kept
			t.Fatalf("stale CAS: %v, want ErrKeyModified", err)
		}
	}
	// The reply of a successful CAS is a valid previous pair.
	if ok, _, err := s.AtomicPut(ctx, key, v3, p2, nil); err != nil || !ok {
		t.Fatalf("CAS from the reply: %v %v", ok, err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AtomicPut(ctx, key, v1, p2, nil); err != store.ErrKeyNotFound { //nolint:errorlint // identity kept
		t.Fatalf("CAS on a missing key: %v, want ErrKeyNotFound", err)
	}

	// Values without a "LastIndex" member get no protection: a stale CAS
	// succeeds (kvtools' behaviour, documented).
	plain := key + "/plain"
	defer func() { _ = s.Delete(ctx, plain) }()
	if err := s.Put(ctx, plain, []byte(`{"a":1}`), nil); err != nil {
		t.Fatal(err)
	}
	stale, _ := s.Get(ctx, plain, nil)
	if err := s.Put(ctx, plain, []byte(`{"a":2}`), nil); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := s.AtomicPut(ctx, plain, []byte(`{"a":3}`), stale, nil); err != nil || !ok {
		t.Fatalf("stale CAS without a LastIndex member: %v %v (kvtools was expected to let it through)", ok, err)
	}
	// Non-JSON values make kvtools' script fail.
	if err := s.Put(ctx, plain, []byte(`plain`), nil); err != nil {
		t.Fatal(err)
	}
	stale, _ = s.Get(ctx, plain, nil)
	if _, _, err := s.AtomicPut(ctx, plain, []byte(`x`), stale, nil); err == nil {
		t.Fatal("CAS of a non-JSON value succeeded")
	} else {
		t.Logf("CAS of a non-JSON value: %v", err)
	}
}

// Keyspace notifications deliver puts, compare-and-swaps, deletes and
// expiries.
func TestWatchEvents(t *testing.T) {
	s, other := openTwo(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key := uniqueKey(t)
	defer func() { _ = other.Delete(context.Background(), key) }()

	wctx, wcancel := context.WithCancel(ctx)
	ch, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Events may repeat (each notification triggers a read): each step
	// waits for the value wanted.
	expectValue(t, ch, "", 5*time.Second) // missing at start; read once subscribed: no change is missed from here
	v1 := `{"LastIndex":"1"}`
	if err := other.Put(ctx, key, []byte(v1), nil); err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, v1, 5*time.Second) // put
	prev, err := other.Get(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	v2 := `{"LastIndex":"2"}`
	if _, _, err := other.AtomicPut(ctx, key, []byte(v2), prev, nil); err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, v2, 5*time.Second) // compare-and-swap
	if err := other.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, "", 5*time.Second) // delete
	v3 := `{"LastIndex":"3"}`
	if err := other.Put(ctx, key, []byte(v3), &store.WriteOptions{TTL: time.Second}); err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, v3, 5*time.Second) // put with TTL
	expectValue(t, ch, "", 5*time.Second) // expiry

	wcancel()
	if !storetest.Closes(ch, storetest.HangBound) {
		t.Fatal("watch channel not closed after cancel")
	}
}

// kvtools' client ignores context deadlines on its sockets (30s timeout);
// the wrapped calls return by the deadline.
func TestCallsBounded(t *testing.T) {
	cfg := serverConfig(t)
	ctx := context.Background()

	// Before.
	p := electiontest.Forwarder(t, cfg.Endpoints[0])
	kv, err := kvredis.New(ctx, []string{p.Addr()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Cut()
	done := storetest.Blocked(t, "raw Get with a 200ms deadline against a hung server", func() error {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := kv.Get(cctx, "k", nil)
		return err
	})
	_ = p.Close()
	<-done
	_ = kv.Close()

	// After.
	p = electiontest.Forwarder(t, cfg.Endpoints[0])
	s := openClient(t, Config{Endpoints: []string{p.Addr()}, RequestTimeout: 300 * time.Millisecond})
	p.Cut()
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := s.Get(cctx, "k", nil); !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("Get: %v", err)
	}
	took := time.Since(start)
	t.Logf("after: wrapped Get returned after %v", took.Round(time.Millisecond))
	if took > storetest.HangBound {
		t.Fatalf("Get returned after %v: hung", took)
	}
	start = time.Now()
	if _, _, err := s.AtomicPut(ctx, "k", []byte("v"), nil, nil); !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("AtomicPut: %v", err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("Delete: %v", err)
	}
	took = time.Since(start)
	t.Logf("after: wrapped AtomicPut and Delete returned after %v", took.Round(time.Millisecond))
	if took > storetest.HangBound {
		t.Fatalf("AtomicPut and Delete returned after %v: hung", took)
	}
	_ = p.Close() // let the abandoned calls finish before Close
}

// countStacks counts the goroutines whose stack mentions fn.
func countStacks(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf), fn)
}

// A cancelled kvtools watch keeps its subscription until the next event on
// its key; the wrapped store's watch drops its subscription at once.
func TestCancelledWatchEnds(t *testing.T) {
	cfg := serverConfig(t)
	const loop = "github.com/kvtools/redis.(*subscribe).receiveLoop("
	base := countStacks(loop)
	key := uniqueKey(t)

	// Before.
	kv, err := kvredis.New(context.Background(), cfg.Endpoints, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := kv.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel()
	time.Sleep(time.Second)
	// Other tests' abandoned kvtools clients may end their loops meanwhile,
	// so the count only illustrates; the assertions are on the server below.
	t.Logf("before: %d more kvtools subscription loops 1s after cancel", countStacks(loop)-base)
	_ = kv.Close()
	for range ch {
	}

	// After.
	s := openClient(t, cfg)
	ctx, cancel = context.WithCancel(context.Background())
	ch2, err := s.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-ch2
	channel := "__keyspace@0__:" + key
	if n := numSub(t, cfg, channel); n != 1 {
		t.Fatalf("after: %d subscribers of %s while watching", n, channel)
	}
	cancel()
	for range ch2 {
	}
	storetest.WaitFor(t, 10*time.Second, "the subscription dropped", func() bool { return numSub(t, cfg, channel) == 0 })
	t.Log("after: the subscription dropped at cancel")
}

func TestClassify(t *testing.T) {
	for _, err := range []error{store.ErrKeyNotFound, store.ErrKeyModified, store.ErrKeyExists, context.Canceled, errors.New("ERR wrong number of arguments")} {
		if got := classify(err); got != err { //nolint:errorlint // identity kept
			t.Errorf("classify(%v) = %v", err, got)
		}
	}
	if got := classify(context.DeadlineExceeded); !errors.Is(got, store.ErrNotReachable) || !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("classify(DeadlineExceeded) = %v", got)
	}
}

// Wrap works on a store built by valkeyrie.
func TestWrapValkeyrieStore(t *testing.T) {
	cfg := serverConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := valkeyrie.NewStore(ctx, kvredis.StoreName, cfg.Endpoints, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := wrap(kv, time.Second)
	defer s.Close()
	key := uniqueKey(t)
	defer func() { _ = s.Delete(context.Background(), key) }()
	v := []byte(`{"LastIndex":"x"}`)
	if ok, p, err := s.AtomicPut(ctx, key, v, nil, nil); err != nil || !ok || !bytes.Equal(p.Value, v) {
		t.Fatalf("AtomicPut: %v %+v %v", ok, p, err)
	}
	if p, err := s.Get(ctx, key, nil); err != nil || !bytes.Equal(p.Value, v) {
		t.Fatalf("Get: %+v %v", p, err)
	}
}
