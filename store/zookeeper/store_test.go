package zookeeper

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/leadershiptest"
)

// The engine's keys ("service/swarm/leader": no leading "/", parents
// missing on a fresh tree) are created by AtomicPut(nil) on every flavour;
// a leading "/" breaks kvtools.
func TestAtomicPutCreatesParents(t *testing.T) {
	eps := servers(t, envSingle)
	open, raw := openOn(t, eps), kvtoolsStore(t, eps)
	wrapped := Wrap(kvtoolsStore(t, eps), 5*time.Second)
	ctx := ctxFor(t, 10*time.Second)
	for _, tc := range []struct {
		name    string
		s       store.Store
		slash   bool
		wantErr bool
	}{
		{"Open", open, false, false},
		{"Open, leading slash", open, true, false},
		{"kvtools", raw, false, false},
		{"kvtools, leading slash", raw, true, true},
		{"Wrap(kvtools)", wrapped, false, false},
		{"Wrap(kvtools), leading slash", wrapped, true, false},
	} {
		key := freshKey("service/swarm/leader")
		cleanup(t, open, prefixOf(prefixOf(prefixOf(key))))
		if tc.slash {
			key = "/" + key
		}
		ok, pair, err := tc.s.AtomicPut(ctx, key, []byte("v1"), nil, nil)
		t.Logf("%s: AtomicPut(%q, nil) = %v, %+v, %v", tc.name, key, ok, pair, err)
		if tc.wantErr {
			if err == nil {
				t.Errorf("%s: kvtools bug fixed? AtomicPut succeeded", tc.name)
			}
			continue
		}
		if err != nil || !ok || pair == nil || pair.LastIndex != 0 || string(pair.Value) != "v1" {
			t.Errorf("%s: AtomicPut(nil) = %v, %+v, %v", tc.name, ok, pair, err)
			continue
		}
		got, err := open.Get(ctx, key, nil)
		if err != nil || string(got.Value) != "v1" {
			t.Errorf("%s: Get after create = %+v, %v", tc.name, got, err)
		}
		if _, _, err := tc.s.AtomicPut(ctx, key, []byte("v2"), nil, nil); !errors.Is(err, store.ErrKeyExists) {
			t.Errorf("%s: second create: %v, want store.ErrKeyExists", tc.name, err)
		}
		ok, pair2, err := tc.s.AtomicPut(ctx, key, []byte("v2"), pair, nil)
		if err != nil || !ok || pair2.LastIndex != 1 || string(pair2.Value) != "v2" {
			t.Errorf("%s: CAS = %v, %+v, %v", tc.name, ok, pair2, err)
		}
		if _, _, err := tc.s.AtomicPut(ctx, key, []byte("v3"), pair, nil); !errors.Is(err, store.ErrKeyModified) {
			t.Errorf("%s: stale CAS: %v, want store.ErrKeyModified", tc.name, err)
		}
	}
}

// kvtools defects fixed by Wrap and absent from Open, shown on the live
// server: before (kvtools as valkeyrie.NewStore builds it) and after.
func TestKvtoolsDefects(t *testing.T) {
	eps := servers(t, envSingle)
	open, raw := openOn(t, eps), kvtoolsStore(t, eps)
	wrapped := Wrap(kvtoolsStore(t, eps), 5*time.Second)
	ctx := ctxFor(t, 10*time.Second)

	t.Run("Put with a leading slash writes nothing", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			s    store.Store
			bug  bool
		}{{"kvtools", raw, true}, {"Wrap", wrapped, false}, {"Open", open, false}} {
			key := "/" + freshKey("a/b")
			cleanup(t, open, prefixOf(prefixOf(key)))
			err := tc.s.Put(ctx, key, []byte("v"), nil)
			_, gerr := open.Get(ctx, key, nil)
			t.Logf("%s: Put(%q) = %v; Get: %v", tc.name, key, err, gerr)
			if tc.bug {
				if err != nil || !errors.Is(gerr, store.ErrKeyNotFound) {
					t.Errorf("kvtools bug fixed? Put = %v, Get = %v", err, gerr)
				}
			} else if err != nil || gerr != nil {
				t.Errorf("%s: Put = %v, Get = %v", tc.name, err, gerr)
			}
		}
	})

	t.Run("CAS on a missing key", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			s    store.Store
			want error
		}{{"kvtools", raw, zk.ErrNoNode}, {"Wrap", wrapped, store.ErrKeyNotFound}, {"Open", open, store.ErrKeyNotFound}} {
			key := freshKey("missing")
			_, _, err := tc.s.AtomicPut(ctx, key, []byte("v"), &store.KVPair{Key: key, LastIndex: 3}, nil)
			t.Logf("%s: AtomicPut(missing, previous) = %v", tc.name, err)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			}
		}
	})

	t.Run("CAS with a LastIndex beyond int32", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			s    store.Store
			bug  bool
		}{{"kvtools", raw, true}, {"Wrap", wrapped, false}, {"Open", open, false}} {
			key := freshKey("big")
			cleanup(t, open, prefixOf(key))
			if _, _, err := open.AtomicPut(ctx, key, []byte("original"), nil, nil); err != nil {
				t.Fatal(err)
			}
			// int32(2^32-1) is -1: "any version".
			ok, _, err := tc.s.AtomicPut(ctx, key, []byte("overwritten"), &store.KVPair{Key: key, LastIndex: math.MaxUint32}, nil)
			got, _ := open.Get(ctx, key, nil)
			t.Logf("%s: AtomicPut(previous.LastIndex=2^32-1) = %v, %v; value now %q", tc.name, ok, err, got.Value)
			if tc.bug {
				if !ok || string(got.Value) != "overwritten" {
					t.Errorf("kvtools bug fixed? %v, %v", ok, err)
				}
			} else if ok || !errors.Is(err, store.ErrKeyModified) || string(got.Value) != "original" {
				t.Errorf("%s: %v, %v, value %q; want store.ErrKeyModified and no write", tc.name, ok, err, got.Value)
			}
		}
	})

	t.Run("Watch on a missing key", func(t *testing.T) {
		key := freshKey("w")
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		ch, err := raw.Watch(wctx, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, open := <-ch
		t.Logf("kvtools: the watch of a missing key closed (open=%v) after %v", open, time.Since(start))
		if open {
			t.Error("kvtools bug fixed? the watch sent a value")
		}
	})
}

// Calls on kvtools' store ignore their context when the server hangs;
// Wrap makes them return at their deadline.
func TestKvtoolsHung(t *testing.T) {
	eps := servers(t, envSingle)
	noLeaks(t)
	fwd, err := leadershiptest.NewForwarder(eps[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fwd.Close() })
	raw := kvtoolsStore(t, []string{fwd.Addr()})
	wrapped := Wrap(raw, time.Second)
	key := freshKey("hung")
	ctx := ctxFor(t, 10*time.Second)
	if _, err := wrapped.Exists(ctx, key, nil); err != nil { // connected
		t.Fatal(err)
	}
	fwd.Cut()

	done := make(chan time.Duration, 1)
	go func() {
		c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, _ = raw.Get(c, key, nil)
		done <- time.Since(start)
	}()
	select {
	case d := <-done:
		t.Errorf("kvtools bug fixed? Get under a 200ms context returned after %v", d)
	case <-time.After(1500 * time.Millisecond):
		t.Log("kvtools: Get under a 200ms context still blocked after 1.5s")
	}

	c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = wrapped.Get(c, key, nil)
	took := time.Since(start)
	t.Logf("Wrap: Get under a 200ms context: %v after %v", err, took)
	if !errors.Is(err, store.ErrNotReachable) || !errors.Is(err, context.DeadlineExceeded) || took > hangBound {
		t.Errorf("Wrap: Get = %v after %v, want store.ErrNotReachable at the 200ms deadline", err, took)
	}
	// Let the stuck calls end: a broken connection fails them.
	fwd.Kill()
	if d := <-done; d > 10*time.Second {
		t.Errorf("the kvtools call took %v", d)
	}
}

// Watch reports creation, changes, deletion and re-creation, keeps going
// through them, and closes promptly on cancel.
func TestWatch(t *testing.T) {
	s := openSingle(t)
	other := openSingle(t)
	key := freshKey("watched")
	cleanup(t, other, prefixOf(key))
	ctx := ctxFor(t, 20*time.Second)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	next := func(what string) *store.KVPair {
		t.Helper()
		select {
		case p, ok := <-events:
			if !ok {
				t.Fatalf("%s: the watch closed", what)
			}
			return p
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no event", what)
		}
		return nil
	}
	if p := next("missing key"); p.Key != key || p.Value != nil {
		t.Fatalf("first event %+v, want an empty pair", p)
	}
	_, p1, err := other.AtomicPut(ctx, key, []byte("one"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := next("create"); string(p.Value) != "one" || p.LastIndex != 0 {
		t.Fatalf("after create: %+v", p)
	}
	if _, _, err := other.AtomicPut(ctx, key, []byte("two"), p1, nil); err != nil {
		t.Fatal(err)
	}
	if p := next("update"); string(p.Value) != "two" || p.LastIndex != 1 {
		t.Fatalf("after update: %+v", p)
	}
	if err := other.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if p := next("delete"); p.Value != nil {
		t.Fatalf("after delete: %+v, want an empty pair", p)
	}
	if _, _, err := other.AtomicPut(ctx, key, []byte("three"), nil, nil); err != nil {
		t.Fatal(err)
	}
	// The data version starts again at 0 (see the package doc).
	if p := next("re-create"); string(p.Value) != "three" || p.LastIndex != 0 {
		t.Fatalf("after re-create: %+v", p)
	}
	start := time.Now()
	cancel()
	select {
	case <-drained(events):
		t.Logf("the watch closed %v after cancel", time.Since(start))
	case <-time.After(hangBound):
		t.Errorf("the watch still open %v after cancel", hangBound)
	}
}

// Close ends watches, lock monitors and the client's goroutines.
func TestCloseLeavesNothing(t *testing.T) {
	eps := servers(t, envSingle)
	noLeaks(t)
	cleaner := openOn(t, eps)
	s, err := Open(context.Background(), testConfig(eps))
	if err != nil {
		t.Fatal(err)
	}
	key := freshKey("close")
	cleanup(t, cleaner, prefixOf(key))
	ctx := ctxFor(t, 10*time.Second)
	events, err := s.Watch(context.Background(), key, nil) // never cancelled
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s.WatchTree(context.Background(), prefixOf(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := s.NewLock(ctx, key+"-lock", &store.LockOptions{Value: []byte("held")})
	if err != nil {
		t.Fatal(err)
	}
	lost, err := lock.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Readers keep reading (the guard's Close waits for a watch whose
	// reader neither reads nor cancels).
	watches := []<-chan struct{}{drained(events), drained(tree), lost}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close took %v", time.Since(start))
	for _, ch := range watches {
		select {
		case <-ch:
		case <-time.After(hangBound):
			t.Fatal("a channel stayed open after Close")
		}
	}
	// The lock's node was ephemeral: gone with the session.
	pairs, err := cleaner.List(ctx, key+"-lock", nil)
	if err != nil || len(pairs) != 0 {
		t.Errorf("List of the lock after Close: %v, %v", pairs, err)
	}
}

func drained[T any](ch <-chan T) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range ch {
		}
		close(done)
	}()
	return done
}

// With Username, the session is authenticated and the nodes created are
// readable only by that user.
func TestDigestAuth(t *testing.T) {
	eps := servers(t, envSingle)
	ctx := ctxFor(t, 10*time.Second)
	cfg := testConfig(eps)
	cfg.Username, cfg.Password = "leadership", "s3cret"
	alice, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alice.Close() })
	cfg.Password = "wrong"
	mallory, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mallory.Close() })
	anon := openSingle(t)

	key := freshKey("private")
	cleanup(t, alice, prefixOf(key))
	if _, _, err := alice.AtomicPut(ctx, key, []byte("secret"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if p, err := alice.Get(ctx, key, nil); err != nil || !bytes.Equal(p.Value, []byte("secret")) {
		t.Fatalf("owner Get: %+v, %v", p, err)
	}
	for name, s := range map[string]store.Store{"anonymous": anon, "wrong password": mallory} {
		if _, err := s.Get(ctx, key, nil); !errors.Is(err, zk.ErrNoAuth) {
			t.Errorf("%s Get: %v, want zk.ErrNoAuth", name, err)
		}
	}
}
