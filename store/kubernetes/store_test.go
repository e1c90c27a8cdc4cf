package kubernetes

import (
	"context"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/internal/storetest"

	lstore "github.com/leadership-go/leadership/store"
)

// valkeyrie's testsuite, the parts a Lease can honour (no TTLs, no locks,
// no WatchTree, which RunTestWatch needs: TestWatchLifecycle covers Watch),
// as admin (it deletes keys), under a unique prefix.
func TestValkeyrieSuite(t *testing.T) {
	s := openAs(t, admin)
	storetest.RunSuite(t, s, storetest.Suite{Prefix: uniqueKey(t) + "/", Atomic: true})
}

// A watch sends an empty pair for a missing key, then the creation, an
// update, the deletion and a re-creation, one event each.
func TestWatchLifecycle(t *testing.T) {
	key := uniqueKey(t)
	w := openAs(t, admin)
	storetest.WatchLifecycle(t, w, openAs(t, admin), key)
	deleteAtCleanup(t, w, key)
}

// A watch whose resourceVersion the server no longer has (410 Gone, "too
// old") lists the Lease again and goes on: the write made meanwhile and
// the later ones arrive.
func TestWatchRelistsWhenTooOld(t *testing.T) {
	key := readableKey(t, "too-old")
	s := openAs(t, admin)
	deleteAtCleanup(t, s, key)
	ctx := ctxFor(t, 60*time.Second)
	_, p1, err := s.AtomicPut(ctx, key, []byte("one"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []string
	gone := make(chan struct{}, 1)
	s.watchHook = func(ev string) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
		if ev == "gone" {
			select {
			case gone <- struct{}{}:
			default:
			}
		}
	}
	var once sync.Once
	s.resumeHook = func(rv string) string {
		old := rv
		once.Do(func() { old = "1" }) // long compacted, and older than the watch cache
		return old
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := next(t, ch); string(p.Value) != "one" || p.LastIndex != p1.LastIndex {
		t.Fatalf("first event %+v, want %+v", p, p1)
	}
	select {
	case <-gone:
	case <-time.After(30 * time.Second):
		mu.Lock()
		t.Fatalf("no 410 Gone within 30s (watch events %v)", events)
	}
	_, p2, err := s.AtomicPut(ctx, key, []byte("two"), p1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := next(t, ch); string(p.Value) != "two" || p.LastIndex != p2.LastIndex {
		t.Fatalf("after the relist %+v, want %+v", p, p2)
	}
	mu.Lock()
	t.Logf("watch events: %v", events)
	mu.Unlock()
}

func next(t *testing.T, ch <-chan *store.KVPair) *store.KVPair {
	t.Helper()
	select {
	case p, ok := <-ch:
		if !ok {
			t.Fatal("watch closed")
		}
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event within 30s")
	}
	return nil
}

// Close ends every watch, and later calls fail with lstore.ErrClosed.
func TestCloseEndsWatches(t *testing.T) {
	s := openAs(t, admin)
	key := uniqueKey(t)
	ch, err := s.Watch(context.Background(), key, nil) // never cancelled
	if err != nil {
		t.Fatal(err)
	}
	if p := next(t, ch); p.Value != nil {
		t.Fatalf("first event %+v, want an empty pair", p)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !storetest.Closes(ch, storetest.HangBound) {
		t.Fatal("the watch did not close at Close")
	}
	_, err = s.Get(context.Background(), key, nil)
	if !errors.Is(err, lstore.ErrClosed) || !errors.Is(err, store.ErrNotReachable) {
		t.Fatalf("Get after Close: %v, want lstore.ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Leases have no multi-object transaction: the store does not claim
// fenced writes, and a leader's FencedPut says so.
func TestNoFencedWrites(t *testing.T) {
	s := openAs(t, candidate)
	storetest.NotFenced(t, s)
	key := readableKey(t, "fenced")
	deleteAtCleanup(t, openAs(t, admin), key)
	c := leadership.NewCandidate(s, key, "node-1", 2*time.Second)
	el, _, err := c.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Stop()
		for range el {
		}
	}()
	waitTrue(t, el, "elected")
	term, ok := c.CurrentTerm()
	if !ok {
		t.Fatal("no current term")
	}
	if err := c.FencedPut(ctxFor(t, 10*time.Second), term, key+"-data", []byte("x")); !errors.Is(err, leadership.ErrFencingUnsupported) {
		t.Fatalf("FencedPut: %v, want ErrFencingUnsupported", err)
	}
}

// Open's errors: what each kind of misconfiguration gives.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxFor(t, 60*time.Second)
	if _, err := Open(ctx, Config{Kubeconfig: filepath.Join(dir, "missing")}); !errors.Is(err, lstore.ErrInvalidConfig) {
		t.Errorf("missing kubeconfig: %v, want lstore.ErrInvalidConfig", err)
	}
	kc := kubeconfigOf(t, candidate)
	if _, err := Open(ctx, Config{Kubeconfig: kc, Context: "no-such-context"}); !errors.Is(err, lstore.ErrInvalidConfig) {
		t.Errorf("unknown context: %v, want lstore.ErrInvalidConfig", err)
	}
	raw, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, from, to string) string {
		t.Helper()
		if !strings.Contains(string(raw), from) {
			t.Fatalf("%s: no %q in the kubeconfig", name, from)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Replace(string(raw), from, to, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A wrong token: 401.
	token := restOf(t, candidate).BearerToken
	bad := write("bad-token", "token: "+token, "token: 0123456789abcdef0123456789abcdef")
	if _, err := Open(ctx, Config{Kubeconfig: bad}); !errors.Is(err, lstore.ErrAuth) {
		t.Errorf("wrong token: %v, want lstore.ErrAuth", err)
	} else {
		t.Logf("wrong token: %v", err)
	}
	// An API server whose certificate no configured CA signed.
	ca := restOf(t, candidate).CAFile
	other := storetest.NewCA(t, "other")
	otherPEM := filepath.Join(dir, "other-ca.crt")
	if err := os.WriteFile(otherPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: other.Cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	untrusted := write("untrusted", "certificate-authority: "+ca, "certificate-authority: "+otherPEM)
	if _, err := Open(ctx, Config{Kubeconfig: untrusted}); !errors.Is(err, lstore.ErrTLS) {
		t.Errorf("untrusted server: %v, want lstore.ErrTLS", err)
	} else {
		t.Logf("untrusted server: %v", err)
	}
	// No server: refused at once; one that never answers: the dial timeout.
	refused := write("refused", "server: https://"+serverAddr(t), "server: https://"+storetest.RefusedAddr(t))
	if _, err := Open(ctx, Config{Kubeconfig: refused}); !errors.Is(err, lstore.ErrUnreachable) || !errors.Is(err, store.ErrNotReachable) {
		t.Errorf("refused: %v, want lstore.ErrUnreachable", err)
	} else {
		t.Logf("refused: %v", err)
	}
	hung := write("hung", "server: https://"+serverAddr(t), "server: https://"+storetest.HungAddr(t))
	start := time.Now()
	if _, err := Open(ctx, Config{Kubeconfig: hung, DialTimeout: 500 * time.Millisecond}); !errors.Is(err, lstore.ErrUnreachable) {
		t.Errorf("hung: %v, want lstore.ErrUnreachable", err)
	} else {
		t.Logf("hung: %v after %v", err, time.Since(start).Round(time.Millisecond))
	}
	// A namespace that does not exist: Open works (it checks no Lease);
	// the first create says so.
	s, err := Open(ctx, Config{Kubeconfig: kc, Namespace: "no-such-namespace"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.AtomicPut(ctx, "k", []byte("v"), nil, nil); !errors.Is(err, lstore.ErrInvalidConfig) && !errors.Is(err, lstore.ErrPermission) {
		t.Errorf("create in a missing namespace: %v", err)
	} else {
		t.Logf("missing namespace: %v", err)
	}
}

// The URL form opens the same store.
func TestOpenURL(t *testing.T) {
	cfg, err := parseURL("k8s://" + namespace(t) + "?kubeconfig=" + kubeconfigOf(t, follower))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctxFor(t, 30*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ns != namespace(t) {
		t.Fatalf("namespace %q", s.ns)
	}
	if _, err := s.Get(ctxFor(t, 10*time.Second), uniqueKey(t), nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("Get of a missing key: %v", err)
	}
}
