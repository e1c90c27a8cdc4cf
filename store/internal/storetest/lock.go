package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// HeldLock takes key's lock on s with opts, failing the test if it cannot,
// and returns its Locker.
func HeldLock(t testing.TB, ctx context.Context, s store.Store, key string, opts *store.LockOptions) store.Locker {
	t.Helper()
	l, err := s.NewLock(ctx, key, opts)
	if err != nil {
		t.Fatalf("NewLock(%s): %v", key, err)
	}
	if _, err := l.Lock(ctx); err != nil {
		t.Fatalf("Lock(%s): %v", key, err)
	}
	return l
}

// LockResult is how a Lock call returned.
type LockResult struct {
	Lost <-chan struct{} // the lost channel Lock returned
	Err  error           // Lock's error
	At   time.Time       // when Lock returned
}

// LockAttempt is a Lock call running in a goroutine of its own.
type LockAttempt struct {
	done chan LockResult
}

// StartLock calls l.Lock(ctx) in a goroutine and returns after settle, the
// time the call gets to reach its wait.
func StartLock(ctx context.Context, l store.Locker, settle time.Duration) *LockAttempt {
	a := &LockAttempt{done: make(chan LockResult, 1)}
	go func() {
		lost, err := l.Lock(ctx)
		a.done <- LockResult{Lost: lost, Err: err, At: time.Now()}
	}()
	time.Sleep(settle)
	return a
}

// Returned reports whether the Lock call has returned, without waiting.
// Once it reports true, Wait is not to be called.
func (a *LockAttempt) Returned() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// Wait returns how the Lock call returned, failing the test with
// notReturned if it does not within Patience.
func (a *LockAttempt) Wait(t testing.TB, notReturned string) LockResult {
	t.Helper()
	select {
	case r := <-a.done:
		return r
	case <-time.After(Patience):
		t.Fatal(notReturned)
	}
	return LockResult{}
}
