package memory

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestLockLost(t *testing.T) {
	tests := []struct {
		name     string
		lose     func(t *testing.T, owner, other *Store, l store.Locker)
		wantGone bool // key absent afterwards
	}{
		{"unlock", func(t *testing.T, _, _ *Store, l store.Locker) {
			require.NoError(t, l.Unlock(context.Background()))
		}, false},
		{"overwrite", func(t *testing.T, _, s *Store, _ store.Locker) {
			require.NoError(t, s.Put(context.Background(), "lock", []byte("other"), nil))
		}, false},
		{"delete", func(t *testing.T, _, s *Store, _ store.Locker) {
			require.NoError(t, s.Delete(context.Background(), "lock"))
		}, true},
		{"delete tree", func(t *testing.T, _, s *Store, _ store.Locker) {
			require.NoError(t, s.DeleteTree(context.Background(), ""))
		}, true},
		{"expiry after close", func(t *testing.T, owner, _ *Store, _ store.Locker) {
			require.NoError(t, owner.Close())
			require.NoError(t, owner.Close())
		}, true},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			name := freshName(t)
			owner, other := openStore(t, name), openStore(t, name)

			l, err := owner.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("me"), TTL: 500 * time.Millisecond})
			require.NoError(t, err)

			lost, err := l.Lock(ctx)
			require.NoError(t, err)
			require.NotNil(t, lost)

			tt.lose(t, owner, other, l)
			if tt.name == "expiry after close" {
				requireOpen(t, lost, "lost right after Close")
			}

			requireSignal(t, lost, "lost channel")

			ok, err := other.Exists(ctx, "lock", nil)
			require.NoError(t, err)
			assert.Equal(t, !tt.wantGone, ok)

			// The lock is free for someone else now.
			l2, err := other.NewLock(ctx, "lock", nil)
			require.NoError(t, err)
			lost2, err := l2.Lock(ctx)
			require.NoError(t, err)
			requireOpen(t, lost2, "new holder")
			require.NoError(t, l2.Unlock(ctx))
		})
	}
}

func TestLockKeptAliveThenRenewStopped(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, freshName(t))
	renew := make(chan struct{})

	l, err := s.NewLock(ctx, "lock", &store.LockOptions{TTL: 50 * time.Millisecond, RenewLock: renew})
	require.NoError(t, err)
	lost, err := l.Lock(ctx)
	require.NoError(t, err)

	time.Sleep(200 * time.Millisecond)
	requireOpen(t, lost, "lock kept alive")

	start := time.Now()
	close(renew)
	requireSignal(t, lost, "expiry after RenewLock closed")
	assert.GreaterOrEqual(t, time.Since(start), 40*time.Millisecond)
	assert.ErrorIs(t, l.Unlock(ctx), errNotLocked)
}

func TestLockUnlockSemantics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	s := openStore(t, freshName(t))

	keep, err := s.NewLock(ctx, "keep", &store.LockOptions{Value: []byte("v")})
	require.NoError(t, err)
	assert.ErrorIs(t, keep.Unlock(ctx), errNotLocked, "never locked")

	events, err := s.Watch(ctx, "keep", nil)
	require.NoError(t, err)
	storetest.NextPair(t, events)

	_, err = keep.Lock(ctx)
	require.NoError(t, err)
	acquired := storetest.NextPair(t, events)
	assert.Equal(t, []byte("v"), acquired.Value)

	_, err = keep.Lock(ctx)
	assert.ErrorIs(t, err, errAlreadyLocked)

	require.NoError(t, keep.Unlock(ctx))
	released := storetest.NextPair(t, events)
	assert.Equal(t, []byte("v"), released.Value, "value stays without DeleteOnUnlock")
	assert.Greater(t, released.LastIndex, acquired.LastIndex, "release takes an index")
	assert.ErrorIs(t, keep.Unlock(ctx), errNotLocked, "double unlock")

	del, err := s.NewLock(ctx, "del", &store.LockOptions{Value: []byte("v"), DeleteOnUnlock: true})
	require.NoError(t, err)
	delEvents, err := s.Watch(ctx, "del", nil)
	require.NoError(t, err)
	storetest.NextPair(t, delEvents)

	_, err = del.Lock(ctx)
	require.NoError(t, err)
	storetest.NextPair(t, delEvents)
	require.NoError(t, del.Unlock(ctx))
	p := storetest.NextPair(t, delEvents)
	assert.Nil(t, p.Value, "DeleteOnUnlock: watch gets an empty pair")
}

func TestLockContention(t *testing.T) {
	ctx := context.Background()
	a, b := openTwo(t)

	la := storetest.HeldLock(t, ctx, a, "lock", &store.LockOptions{Value: []byte("a")})
	lb, err := b.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("b")})
	require.NoError(t, err)

	// A canceled wait returns promptly with the context error.
	waitCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	start := time.Now()
	ch, err := lb.Lock(waitCtx)
	cancel()
	assert.Nil(t, ch)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	t.Logf("canceled wait returned after %v", time.Since(start))
	assert.Less(t, time.Since(start), storetest.Patience, "hung")

	cancelCtx, cancel := context.WithCancel(ctx)
	cancelled := storetest.StartLock(cancelCtx, lb, 20*time.Millisecond)
	cancel()
	assert.ErrorIs(t, cancelled.Wait(t, "Lock did not return after cancel").Err, context.Canceled)

	// A blocked Lock is granted as soon as the holder releases.
	waiting := storetest.StartLock(ctx, lb, 20*time.Millisecond)
	if waiting.Returned() {
		t.Fatal("Lock granted while held")
	}
	require.NoError(t, la.Unlock(ctx))
	granted := waiting.Wait(t, "Lock not granted after Unlock")
	assert.NoError(t, granted.Err)
	require.NotNil(t, granted.Lost)

	p, err := a.Get(ctx, "lock", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("b"), p.Value)
	require.NoError(t, lb.Unlock(ctx))
}

func TestLockDefaultsAndMinTTL(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, freshName(t))

	l, err := s.NewLock(ctx, "a", nil)
	require.NoError(t, err)
	assert.Equal(t, defaultLockTTL, l.(*locker).TTL)

	l, err = s.NewLock(ctx, "b", &store.LockOptions{TTL: time.Nanosecond})
	require.NoError(t, err)
	assert.Equal(t, s.MinTTL(), l.(*locker).TTL)
}

func TestLockMutualExclusion(t *testing.T) {
	ctx := context.Background()
	name := freshName(t)

	const workers, rounds = 8, 20

	var holders, maxHolders, total int64
	var mu sync.Mutex

	var wg sync.WaitGroup
	for range workers {
		h := openStore(t, name)
		l, err := h.NewLock(ctx, "mutex", &store.LockOptions{TTL: time.Second, DeleteOnUnlock: true})
		require.NoError(t, err)

		wg.Add(1)
		go func() {
			defer wg.Done()

			for range rounds {
				_, err := l.Lock(ctx)
				if !assert.NoError(t, err) {
					return
				}

				mu.Lock()
				holders++
				maxHolders = max(maxHolders, holders)
				total++
				mu.Unlock()

				time.Sleep(100 * time.Microsecond)

				mu.Lock()
				holders--
				mu.Unlock()

				if !assert.NoError(t, l.Unlock(ctx)) {
					return
				}
			}
		}()
	}

	wg.Wait()
	assert.Equal(t, int64(1), maxHolders)
	assert.Equal(t, int64(workers*rounds), total)
}
