package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"
)

// Patience is how long NextPair and NextList wait for an event: generous,
// since the machine running the tests may be loaded.
const Patience = 10 * time.Second

// Context returns a context that ends after d or with the test.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// NoLeaks checks, once the test and all its cleanups are done, that no
// goroutine started during the test is left. Call it before anything that
// registers cleanups.
func NoLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// WaitFor polls cond until it holds, failing the test if d passes first.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Recv waits up to d for the next value on ch; ok is false if ch closed or
// nothing came.
func Recv[T any](ch <-chan T, d time.Duration) (v T, ok bool) {
	select {
	case v, ok = <-ch:
		return v, ok
	case <-time.After(d):
		return v, false
	}
}

// NextPair waits up to Patience for the next pair on ch, which must be
// open and send a non-nil pair.
func NextPair(t testing.TB, ch <-chan *store.KVPair) *store.KVPair {
	t.Helper()
	select {
	case p, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed")
		}
		if p == nil {
			t.Fatal("watch sent a nil pair")
		}
		return p
	case <-time.After(Patience):
		t.Fatal("timed out waiting for a watch event")
		return nil
	}
}

// NextList waits up to Patience for the next list on ch, which must be
// open.
func NextList(t testing.TB, ch <-chan []*store.KVPair) []*store.KVPair {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatal("watch tree channel closed")
		}
		return l
	case <-time.After(Patience):
		t.Fatal("timed out waiting for a watch tree event")
		return nil
	}
}

// drained reads ch until it closes, then closes the returned channel.
func drained[T any](ch <-chan T) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range ch {
		}
		close(done)
	}()
	return done
}

// Closes reports whether ch closes within d; what comes on it meanwhile is
// dropped.
func Closes[T any](ch <-chan T, d time.Duration) bool {
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// Blocked runs call in a goroutine and checks that it is still blocked
// 1.5s later: the "before" half of a test that shows a call ignoring its
// deadline on a hung server (the wait only bounds from below, which load
// cannot make fail). If call returned, the test fails. Either way the
// returned channel delivers call's error once call returns.
func Blocked(t testing.TB, what string, call func() error) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		t.Errorf("%s returned (%v); it was expected to block", what, err)
		done <- err
	case <-time.After(1500 * time.Millisecond):
		t.Logf("before: %s still blocked after 1.5s", what)
	}
	return done
}
