package consul

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// intruder is an HTTP proxy in front of the agent that, right after a
// successful compare-and-swap on key passes through it, writes "intruder"
// to key directly: the write a concurrent client could make between
// kvtools' CAS and its read-back.
type intruder struct {
	srv   *httptest.Server
	key   string
	fired atomic.Int32
}

func newIntruder(t *testing.T, agentAddr string, direct store.Store) *intruder {
	target, _ := url.Parse("http://" + agentAddr)
	in := &intruder{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{}
	proxy.ModifyResponse = func(resp *http.Response) error {
		r := resp.Request
		if in.key == "" || r.Method != http.MethodPut || r.URL.Path != "/v1/kv/"+in.key || !r.URL.Query().Has("cas") {
			return nil
		}
		body, _ := readAll(resp)
		if strings.TrimSpace(string(body)) == "true" {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := direct.Put(ctx, in.key, []byte("intruder"), nil); err != nil {
				t.Errorf("intruder write: %v", err)
			}
			in.fired.Add(1)
		}
		return nil
	}
	in.srv = httptest.NewServer(proxy)
	t.Cleanup(func() {
		in.srv.Close()
		proxy.Transport.(*http.Transport).CloseIdleConnections()
	})
	return in
}

func readAll(resp *http.Response) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(resp.Body)
	_ = resp.Body.Close()
	resp.Body = ioNopCloser(bytes.NewReader(b.Bytes()))
	return b.Bytes(), err
}

// AtomicPut returns the pair it wrote. kvtools reads the key back after its
// compare-and-swap and returns whatever it finds: with a write in between,
// another writer's pair. Wrap detects it; Open does not read back.
func TestAtomicPutReturnsItsPair(t *testing.T) {
	addr := agent(t)
	direct := openAgent(t)
	in := newIntruder(t, addr, direct)
	proxied := strings.TrimPrefix(in.srv.URL, "http://")
	key := freshKey("cas")
	storetest.CleanupTree(t, direct, storetest.Dir(key))
	in.key = key
	ctx := storetest.Context(t, 10*time.Second)

	raw := kvtoolsStore(t, proxied)
	ok, pair, err := raw.AtomicPut(ctx, key, []byte("mine"), nil, nil)
	t.Logf("kvtools: AtomicPut(%q, \"mine\", nil) = %v, %q@%d, %v", key, ok, pairValue(pair), pairIndex(pair), err)
	if !ok || err != nil || string(pair.Value) != "intruder" {
		t.Errorf("kvtools bug fixed? %v, %+v, %v", ok, pair, err)
	}
	if err := direct.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}

	wrapped := wrap(kvtoolsStore(t, proxied), 5*time.Second)
	ok, pair, err = wrapped.AtomicPut(ctx, key, []byte("mine"), nil, nil)
	t.Logf("Wrap: AtomicPut = %v, %+v, %v", ok, pair, err)
	if ok || !errors.Is(err, errUnverifiedWrite) {
		t.Errorf("Wrap: AtomicPut = %v, %+v, %v; want errUnverifiedWrite", ok, pair, err)
	}
	if err := direct.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}

	// Open: the CAS is a transaction whose reply has the new index.
	open := openOn(t, proxied)
	ok, pair, err = open.AtomicPut(ctx, key, []byte("mine"), nil, nil)
	if err != nil || !ok || string(pair.Value) != "mine" {
		t.Fatalf("Open: AtomicPut = %v, %+v, %v", ok, pair, err)
	}
	got, err := direct.Get(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok2, pair2, err := open.AtomicPut(ctx, key, []byte("next"), pair, nil)
	if err != nil || !ok2 || pair2.LastIndex <= pair.LastIndex {
		t.Fatalf("Open: CAS from its own pair = %v, %+v, %v", ok2, pair2, err)
	}
	if got2, _ := direct.Get(ctx, key, nil); got2.LastIndex != pair2.LastIndex || string(got2.Value) != "next" {
		t.Errorf("Open: pair returned %+v, stored %+v", pair2, got2)
	}
	t.Logf("Open: created %q@%d (read back %q@%d), then %q@%d", pair.Value, pair.LastIndex, got.Value, got.LastIndex, pair2.Value, pair2.LastIndex)
	if _, _, err := open.AtomicPut(ctx, key, []byte("stale"), pair, nil); !errors.Is(err, store.ErrKeyModified) {
		t.Errorf("Open: stale CAS: %v, want store.ErrKeyModified", err)
	}
	if _, _, err := open.AtomicPut(ctx, key, []byte("again"), nil, nil); !errors.Is(err, store.ErrKeyExists) {
		t.Errorf("Open: create of an existing key: %v, want store.ErrKeyExists", err)
	}
	if in.fired.Load() != 2 {
		t.Errorf("the intruder wrote %d times, want 2 (kvtools' CAS only)", in.fired.Load())
	}
}

func pairValue(p *store.KVPair) string {
	if p == nil {
		return "<nil>"
	}
	return string(p.Value)
}

func pairIndex(p *store.KVPair) uint64 {
	if p == nil {
		return 0
	}
	return p.LastIndex
}

// Delete, AtomicDelete, List and DeleteTree keep to the key and its
// subtree; kvtools' List and DeleteTree take every key sharing the prefix.
func TestTreeOperations(t *testing.T) {
	addr := agent(t)
	s := openAgent(t)
	ctx := storetest.Context(t, 10*time.Second)
	base := freshKey("dir")
	storetest.CleanupTree(t, s, storetest.Dir(base))
	for _, k := range []string{base, base + "/a", base + "/b/c", base + "X"} {
		if err := s.Put(ctx, k, []byte(k), nil); err != nil {
			t.Fatal(err)
		}
	}
	pairs, err := s.List(ctx, base, nil)
	if err != nil || len(pairs) != 2 || pairs[0].Key != base+"/a" || pairs[1].Key != base+"/b/c" {
		t.Fatalf("List = %v, %v", keys(pairs), err)
	}
	raw := kvtoolsStore(t, addr)
	rawPairs, err := raw.List(ctx, base, nil)
	t.Logf("kvtools: List(%q) = %v, %v", base, keys(rawPairs), err)

	if err := s.DeleteTree(ctx, base); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]bool{base: false, base + "/a": false, base + "/b/c": false, base + "X": true} {
		if ok, err := s.Exists(ctx, k, nil); err != nil || ok != want {
			t.Errorf("after DeleteTree: Exists(%q) = %v, %v; want %v", k, ok, err, want)
		}
	}
	if _, err := s.List(ctx, base, nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Errorf("List of a deleted tree: %v", err)
	}
	if err := s.DeleteTree(ctx, base); err != nil {
		t.Errorf("DeleteTree of nothing: %v", err)
	}
	if err := s.Delete(ctx, base); !errors.Is(err, store.ErrKeyNotFound) {
		t.Errorf("Delete of a missing key: %v", err)
	}
	p, err := s.Get(ctx, base+"X", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.AtomicDelete(ctx, base+"X", &store.KVPair{LastIndex: p.LastIndex + 1000}); ok || !errors.Is(err, store.ErrKeyModified) {
		t.Errorf("stale AtomicDelete: %v, %v", ok, err)
	}
	if ok, err := s.AtomicDelete(ctx, base+"X", p); !ok || err != nil {
		t.Errorf("AtomicDelete: %v, %v", ok, err)
	}
	if ok, err := s.AtomicDelete(ctx, base+"X", p); ok || !errors.Is(err, store.ErrKeyNotFound) {
		t.Errorf("AtomicDelete of a missing key: %v, %v", ok, err)
	}
}

func keys(pairs []*store.KVPair) []string {
	var out []string
	for _, p := range pairs {
		out = append(out, p.Key)
	}
	return out
}

// Watch reports creation, changes, deletion and re-creation, keeps going
// through them, and closes promptly on cancel (during a blocking query).
func TestWatch(t *testing.T) {
	s, other := openAgent(t), openAgent(t)
	key := freshKey("watched")
	storetest.CleanupTree(t, other, storetest.Dir(key))
	storetest.WatchLifecycle(t, s, other, key)
}

// kvtools' watch skips deletes and ignores cancellation until its blocking
// query (up to 15s) returns. (Through Wrap, the guard closes the reader's
// channel at once, and drains kvtools' until it closes.)
func TestKvtoolsWatch(t *testing.T) {
	addr := agent(t)
	direct := openAgent(t)
	raw := kvtoolsStore(t, addr)
	key := freshKey("watched")
	storetest.CleanupTree(t, direct, storetest.Dir(key))
	ctx := storetest.Context(t, 20*time.Second)
	if err := direct.Put(ctx, key, []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	events, err := wrap(raw, 5*time.Second).Watch(wctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-events
	if err := direct.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	select {
	case p, ok := <-events:
		t.Errorf("kvtools bug fixed? after a delete: %+v, %v", p, ok)
	case <-time.After(time.Second):
		t.Log("kvtools: no event for a delete within 1s")
	}
	start := time.Now()
	cancel()
	for range events {
	}
	t.Logf("wrap(kvtools): the watch closed %v after cancel", time.Since(start))
	// The guard closed its channel at once, but kvtools' goroutine is
	// still in its blocking query (draining into the guard): a change
	// ends it, before the test does.
	time.Sleep(100 * time.Millisecond)
	if err := direct.Put(ctx, key, []byte("w"), nil); err != nil {
		t.Fatal(err)
	}
}

// Calls on kvtools' store ignore their context when the agent hangs;
// Wrap makes them return at their deadline.
func TestKvtoolsHung(t *testing.T) {
	addr := agent(t)
	storetest.NoLeaks(t)
	fwd := electiontest.Forwarder(t, addr)
	raw := kvtoolsStore(t, fwd.Addr())
	// The stuck call ends when a broken connection fails it (and Go's
	// client retries the GET on a new connection, which must get through).
	storetest.WrapBoundsHungCalls(t, raw, wrap(raw, time.Second), freshKey("hung"), fwd.Cut, func() {
		fwd.Kill()
		fwd.Heal()
	})
	http.DefaultClient.CloseIdleConnections() // kvtools' client
}

// Close ends watches and held locks, and leaves no goroutine.
func TestCloseLeavesNothing(t *testing.T) {
	addr := agent(t)
	storetest.NoLeaks(t)
	cleaner := openAgent(t)
	s, err := Open(context.Background(), testConfig(addr))
	if err != nil {
		t.Fatal(err)
	}
	key := freshKey("close")
	storetest.CleanupTree(t, cleaner, storetest.Dir(key))
	storetest.CloseEndsWatchesAndLocks(t, s, key, &store.LockOptions{Value: []byte("held"), TTL: 2 * time.Second})
	ctx := storetest.Context(t, 10*time.Second)
	// The lock was released with its session.
	p, err := cleaner.Get(ctx, key+"-lock", nil)
	if err != nil || string(p.Value) != "held" {
		t.Fatalf("lock key after Close: %+v, %v", p, err)
	}
	other, err := cleaner.NewLock(ctx, key+"-lock", &store.LockOptions{TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lctx, lcancel := context.WithTimeout(ctx, 2*time.Second)
	defer lcancel()
	if _, err := other.Lock(lctx); err != nil {
		t.Fatalf("the lock was not released by Close: %v", err)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Lock honours its context while another holder has the lock.
func TestLockCancel(t *testing.T) {
	s := openAgent(t)
	key := freshKey("lock")
	storetest.CleanupTree(t, s, storetest.Dir(key))
	ctx := storetest.Context(t, 10*time.Second)
	a, _ := s.NewLock(ctx, key, &store.LockOptions{TTL: 2 * time.Second})
	if _, err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	b, _ := openAgent(t).NewLock(ctx, key, &store.LockOptions{TTL: 2 * time.Second})
	bctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.Lock(bctx)
	took := time.Since(start)
	t.Logf("Lock of a held lock under 300ms: %v after %v", err, took)
	if !errors.Is(err, context.DeadlineExceeded) || took > storetest.HangBound {
		t.Errorf("Lock of a held lock under 300ms: %v after %v", err, took)
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func ioNopCloser(r *bytes.Reader) *nopCloser { return &nopCloser{r} }

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// runSuite runs valkeyrie's testsuite on kv under a fresh prefix; cleaner
// deletes the prefix afterwards.
func runSuite(t *testing.T, kv, other, cleaner store.Store) {
	dir := storetest.Dir(freshKey("suite"))
	storetest.CleanupTree(t, cleaner, dir)
	// Not RunTestWatch: its testWatch writes the same value three times and
	// expects three events, but Consul (1.20 at least) ignores a write that
	// changes nothing: the index does not move and no watch fires. TestWatch
	// and TestWatchTree cover the same ground.
	// Locks and TTLs need sessions of 1s: the test agent allows them
	// (session_ttl_min lowered); stock agents refuse TTLs under 10s.
	storetest.RunSuite(t, kv, storetest.Suite{Prefix: dir + "/", Atomic: true, Lock: true, ListLock: true, TTL: other})
}

func TestValkeyrieSuite(t *testing.T) {
	runSuite(t, openAgent(t), openAgent(t), openAgent(t))
}

// The testsuite on wrap(kvtools store). Failures here are kvtools defects
// that cannot be fixed from outside (see Wrap); run on demand with
// LEADERSHIP_KVTOOLS_SUITE=1.
func TestValkeyrieSuiteWrapped(t *testing.T) {
	addr := agent(t)
	if os.Getenv("LEADERSHIP_KVTOOLS_SUITE") == "" {
		t.Skip("LEADERSHIP_KVTOOLS_SUITE is not set: the testsuite on wrap(kvtools/consul) documents kvtools defects")
	}
	runSuite(t, wrap(kvtoolsStore(t, addr), 5*time.Second), wrap(kvtoolsStore(t, addr), 5*time.Second), openAgent(t))
}
