package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestLockLostOnUnlock(t *testing.T) {
	table := freshTable(t)
	kv := openOn(t, table)
	ctx := testCtx(t)

	l, err := kv.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("me"), TTL: time.Second})
	require.NoError(t, err)

	lost, err := l.Lock(ctx)
	require.NoError(t, err)

	_, err = l.Lock(ctx)
	require.ErrorIs(t, err, errAlreadyLocked)

	pair, err := kv.Get(ctx, "lock", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("me"), pair.Value)

	require.NoError(t, l.Unlock(ctx))
	assert.True(t, closedWithin(lost, 0))
	require.ErrorIs(t, l.Unlock(ctx), errNotLocked)

	// Without DeleteOnUnlock the value stays, persistent, with a new index.
	after, err := kv.Get(ctx, "lock", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("me"), after.Value)
	assert.Greater(t, after.LastIndex, pair.LastIndex)

	time.Sleep(1500 * time.Millisecond)
	_, err = kv.Get(ctx, "lock", nil)
	require.NoError(t, err)
}

func TestLockLostOnExpiryAfterClose(t *testing.T) {
	kv, owner := openTwo(t)
	ctx := testCtx(t)

	// The lock is renewed every TTL/3, so it expires between 2/3 TTL and
	// TTL after Close, less however late the last renewal ran: a loaded
	// machine delays renewals by a few hundred milliseconds. A TTL of 1.5s
	// leaves the lower bound below (TTL/4) room for a 600ms stall.
	const ttl = 1500 * time.Millisecond

	l, err := owner.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("owner"), TTL: ttl})
	require.NoError(t, err)
	lost, err := l.Lock(ctx)
	require.NoError(t, err)

	// Renewed while the handle is open.
	assert.False(t, closedWithin(lost, 3*ttl))

	events, err := kv.Watch(ctx, "lock", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("owner"), storetest.NextPair(t, events).Value)

	closed := time.Now()
	require.NoError(t, owner.Close())

	// Not at once: the lock expires TTL after its last renewal.
	assert.True(t, closedWithin(lost, storetest.Patience), "lost not closed on expiry")
	t.Logf("lost closed %v after Close", time.Since(closed))
	assert.GreaterOrEqual(t, time.Since(closed), ttl/4)

	// The expiry is a watch event, and someone else can take the lock.
	assert.Nil(t, storetest.NextPair(t, events).Value)

	other, err := kv.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("kv"), TTL: ttl})
	require.NoError(t, err)

	lctx, cancel := context.WithTimeout(ctx, storetest.Patience)
	defer cancel()

	_, err = other.Lock(lctx)
	require.NoError(t, err)
	require.NoError(t, other.Unlock(ctx))
}

func TestLockLostOnOverwriteAndDelete(t *testing.T) {
	kv, other := openTwo(t)
	ctx := testCtx(t)

	// A TTL (and so a renewal period) far longer than the waits below:
	// lost closes on the change itself, not at a renewal.
	l, err := kv.NewLock(ctx, "lock", &store.LockOptions{TTL: time.Minute})
	require.NoError(t, err)

	lost, err := l.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, other.Put(ctx, "lock", []byte("mine now"), nil))
	assert.True(t, closedWithin(lost, storetest.Patience), "lost not closed on overwrite")
	require.ErrorIs(t, l.Unlock(ctx), errNotLocked)

	pair, err := kv.Get(ctx, "lock", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("mine now"), pair.Value)

	lost, err = l.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, other.Delete(ctx, "lock"))
	assert.True(t, closedWithin(lost, storetest.Patience), "lost not closed on delete")
}

func TestLockRenewStop(t *testing.T) {
	table := freshTable(t)
	kv := openOn(t, table)
	ctx := testCtx(t)

	const ttl = 500 * time.Millisecond

	renew := make(chan struct{})
	l, err := kv.NewLock(ctx, "lock", &store.LockOptions{TTL: ttl, RenewLock: renew, DeleteOnUnlock: true})
	require.NoError(t, err)

	lost, err := l.Lock(ctx)
	require.NoError(t, err)
	assert.False(t, closedWithin(lost, 3*ttl))

	close(renew)
	assert.True(t, closedWithin(lost, storetest.Patience), "lost not closed after the renewal stopped")

	// lost closes at the latest when the row expires on the server.
	require.Eventually(t, func() bool {
		_, err := kv.Get(ctx, "lock", nil)

		return errors.Is(err, store.ErrKeyNotFound)
	}, storetest.Patience, 5*time.Millisecond)
}

func TestLockWaitsAndWakes(t *testing.T) {
	kv, other := openTwo(t)
	ctx := testCtx(t)

	holder := storetest.HeldLock(t, ctx, other, "lock", &store.LockOptions{TTL: 10 * time.Second, DeleteOnUnlock: true})

	waiter, err := kv.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("waiter"), TTL: 10 * time.Second})
	require.NoError(t, err)

	// Context cancellation while blocked.
	lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	lost, err := waiter.Lock(lctx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Nil(t, lost)

	lctx, cancel = context.WithCancel(ctx)
	go func() {
		time.Sleep(100 * time.Millisecond)
		cancel()
	}()
	_, err = waiter.Lock(lctx)
	require.ErrorIs(t, err, context.Canceled)

	// Woken by the release, well before the 2s safety re-check.
	waiting := storetest.StartLock(ctx, waiter, 200*time.Millisecond)
	released := time.Now()
	require.NoError(t, holder.Unlock(ctx))
	r := waiting.Wait(t, "waiter not woken")
	require.NoError(t, r.Err)
	assert.Less(t, r.At.Sub(released), time.Second)
	t.Logf("lock handed over %v after the unlock", r.At.Sub(released))

	pair, err := kv.Get(ctx, "lock", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("waiter"), pair.Value)
	require.NoError(t, waiter.Unlock(ctx))
}

func TestLockBlockedUntilClose(t *testing.T) {
	kv, other := openTwo(t)
	ctx := testCtx(t)

	holder := storetest.HeldLock(t, ctx, other, "lock", nil)
	waiter, err := kv.NewLock(ctx, "lock", nil)
	require.NoError(t, err)

	blocked := storetest.StartLock(ctx, waiter, 100*time.Millisecond)
	require.NoError(t, kv.Close())
	require.ErrorIs(t, blocked.Wait(t, "Lock not ended by Close").Err, errClosed)

	require.NoError(t, holder.Unlock(ctx))
}

func TestUnlockNotHeld(t *testing.T) {
	table := freshTable(t)
	kv := openOn(t, table)
	ctx := testCtx(t)

	l, err := kv.NewLock(ctx, "lock", nil)
	require.NoError(t, err)
	require.ErrorIs(t, l.Unlock(ctx), errNotLocked)

	_, err = kv.NewLock(ctx, "//", nil)
	require.ErrorIs(t, err, errEmptyKey)
}

func TestKeepAlive(t *testing.T) {
	kv, owner := openTwo(t)
	ctx := testCtx(t)

	// The keeper renews every TTL/3, so a kept-alive key outlives a stall
	// of the owner's process (or of the server) of up to 2/3 of its TTL,
	// no longer: that is the whole promise. With the 300ms TTL this test
	// had, a stall of 200ms expired the key, and a 2-core machine with two
	// CPU hogs beside the test stalls the process that long (sleeps woke
	// up to 350ms late there). A 1s TTL tolerates 667ms.
	const ttl = time.Second

	require.NoError(t, owner.Put(ctx, "ka", []byte("v"), &store.WriteOptions{TTL: ttl, KeepAlive: true}))
	require.NoError(t, owner.Put(ctx, "plain", []byte("v"), &store.WriteOptions{TTL: ttl}))

	time.Sleep(5 * ttl / 2) // several renewals

	_, err := kv.Get(ctx, "ka", nil)
	require.NoError(t, err, "kept-alive key expired")
	_, err = kv.Get(ctx, "plain", nil)
	require.ErrorIs(t, err, store.ErrKeyNotFound)

	require.NoError(t, owner.Close())
	require.Eventually(t, func() bool {
		_, err := kv.Get(ctx, "ka", nil)

		return errors.Is(err, store.ErrKeyNotFound)
	}, storetest.Patience, 20*time.Millisecond)
}
