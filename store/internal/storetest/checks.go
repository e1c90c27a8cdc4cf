package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// WatchLifecycle checks a watch of key on s while other writes key: the
// first event is an empty pair for the missing key; the creation, an
// update, the deletion (an empty pair) and a re-creation then come as one
// event each, carrying the LastIndex of the pair other's AtomicPut
// returned; and the watch closes within HangBound of its cancel, which
// comes while it waits on the server. It returns the pairs of the
// creation, the update and the re-creation.
func WatchLifecycle(t *testing.T, s, other store.Store, key string) (created, updated, recreated *store.KVPair) {
	t.Helper()
	ctx := Context(t, 20*time.Second)
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
		case <-time.After(Patience):
			t.Fatalf("%s: no event", what)
		}
		return nil
	}
	put := func(value string, previous *store.KVPair) *store.KVPair {
		t.Helper()
		_, p, err := other.AtomicPut(ctx, key, []byte(value), previous, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := next("missing key"); p.Key != key || p.Value != nil {
		t.Fatalf("first event %+v, want an empty pair", p)
	}
	p1 := put("one", nil)
	if p := next("create"); string(p.Value) != "one" || p.LastIndex != p1.LastIndex {
		t.Fatalf("after create: %+v, want %+v", p, p1)
	}
	p2 := put("two", p1)
	if p := next("update"); string(p.Value) != "two" || p.LastIndex != p2.LastIndex {
		t.Fatalf("after update: %+v, want %+v", p, p2)
	}
	if err := other.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	if p := next("delete"); p.Value != nil {
		t.Fatalf("after delete: %+v, want an empty pair", p)
	}
	p3 := put("three", nil)
	if p := next("re-create"); string(p.Value) != "three" || p.LastIndex != p3.LastIndex {
		t.Fatalf("after re-create: %+v, want %+v", p, p3)
	}
	time.Sleep(100 * time.Millisecond) // waiting on the server now
	start := time.Now()
	cancel()
	if Closes(events, HangBound) {
		t.Logf("the watch closed %v after cancel", time.Since(start))
	} else {
		t.Errorf("the watch still open %v after cancel", HangBound)
	}
	return p1, p2, p3
}

// CutAfterOpen checks a store s whose server stops answering after Open
// (cut blackholes its connections): Get, bounded by s's request timeout
// (300ms in the tests), and AtomicPut, under a 100ms deadline, both end by
// a store.ErrNotReachable wrapping context.DeadlineExceeded; a watch
// closes after its cancel; Close succeeds; and calls after Close return
// store.ErrNotReachable. It writes key, and closes s.
func CutAfterOpen(t *testing.T, s store.Store, key string, cut func()) {
	t.Helper()
	created, err := putOnce(s, key)
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	events, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Recv(events, Patience); !ok {
		t.Fatal("no first event from the watch")
	}
	cut()

	// Each call ends at its deadline (context.DeadlineExceeded), however
	// long that takes on a loaded machine: only a hang fails the bound.
	start := time.Now()
	_, err = s.Get(context.Background(), key, nil) // no deadline: the request timeout
	took := time.Since(start)
	t.Logf("Get while cut: %v after %v", err, took)
	if !errors.Is(err, store.ErrNotReachable) || !errors.Is(err, context.DeadlineExceeded) || took > HangBound {
		t.Errorf("Get while cut: %v after %v, want store.ErrNotReachable at the request timeout", err, took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, _, err = s.AtomicPut(ctx, key, []byte("w"), created, nil)
	took = time.Since(start)
	t.Logf("AtomicPut while cut: %v after %v", err, took)
	if !errors.Is(err, store.ErrNotReachable) || !errors.Is(err, context.DeadlineExceeded) || took > HangBound {
		t.Errorf("AtomicPut while cut: %v after %v, want store.ErrNotReachable at the 100ms deadline", err, took)
	}
	start = time.Now()
	wcancel()
	if Closes(events, HangBound) {
		t.Logf("the watch closed %v after its cancel", time.Since(start))
	} else {
		t.Errorf("the watch still open %v after its cancel", HangBound)
	}
	start = time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close while cut took %v", time.Since(start))
	if _, err := s.Get(context.Background(), key, nil); !errors.Is(err, store.ErrNotReachable) {
		t.Errorf("Get after Close: %v, want store.ErrNotReachable", err)
	}
}

// putOnce creates key with the value "v" and returns its pair.
func putOnce(s store.Store, key string) (*store.KVPair, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	_, p, err := s.AtomicPut(ctx, key, []byte("v"), nil, nil)
	return p, err
}

// WrapBoundsHungCalls shows, on a server that stops answering, that
// kvtools' store raw ignores its context and that wrapped (Wrap of a
// kvtools store on the same server) returns at its deadline. Both reach
// the server through a forwarder: cut stops its traffic; release must
// then break the connections, so that raw's stuck call ends.
func WrapBoundsHungCalls(t *testing.T, raw, wrapped store.Store, key string, cut, release func()) {
	t.Helper()
	ctx := Context(t, 10*time.Second)
	if _, err := wrapped.Exists(ctx, key, nil); err != nil { // connected
		t.Fatal(err)
	}
	cut()

	stuck := time.Now()
	done := Blocked(t, "kvtools' Get under a 200ms context", func() error {
		c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := raw.Get(c, key, nil)
		return err
	})

	c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := wrapped.Get(c, key, nil)
	took := time.Since(start)
	t.Logf("Wrap: Get under a 200ms context: %v after %v", err, took)
	if !errors.Is(err, store.ErrNotReachable) || !errors.Is(err, context.DeadlineExceeded) || took > HangBound {
		t.Errorf("Wrap: Get = %v after %v, want store.ErrNotReachable at the 200ms deadline", err, took)
	}
	release()
	select {
	case err := <-done:
		t.Logf("kvtools: the stuck Get returned %v after it began: %v", time.Since(stuck), err)
	case <-time.After(HangBound):
		t.Errorf("kvtools: the stuck Get still blocked %v after the connections broke", HangBound)
	}
}

// CloseEndsWatchesAndLocks opens a watch of key and of its directory and
// takes a lock on key+"-lock" with lockOpts on s, all left running, then
// closes s: every watch channel and the lock's lost channel must close
// within HangBound. The caller checks what became of the lock.
func CloseEndsWatchesAndLocks(t *testing.T, s store.Store, key string, lockOpts *store.LockOptions) {
	t.Helper()
	ctx := Context(t, 10*time.Second)
	events, err := s.Watch(context.Background(), key, nil) // never cancelled
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s.WatchTree(context.Background(), Dir(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := s.NewLock(ctx, key+"-lock", lockOpts)
	if err != nil {
		t.Fatal(err)
	}
	lost, err := lock.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Readers keep reading (a store's Close may wait for a watch whose
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
		case <-time.After(HangBound):
			t.Fatal("a channel stayed open after Close")
		}
	}
}
