package memory

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestDisconnectErrors(t *testing.T) {
	ctx := context.Background()
	s, other := openTwo(t)

	memfault.Disconnect(s)
	memfault.Disconnect(s) // idempotent

	err := s.Put(ctx, "k", []byte("v"), nil)
	require.ErrorIs(t, err, errDisconnected)
	require.ErrorIs(t, err, store.ErrNotReachable)
	_, err = s.Get(ctx, "k", nil)
	require.ErrorIs(t, err, errDisconnected)

	require.NoError(t, other.Put(ctx, "k", []byte("v"), nil), "other handles are unaffected")

	memfault.Reconnect(s)
	memfault.Reconnect(s)

	p, err := s.Get(ctx, "k", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("v"), p.Value)
}

func TestDisconnectLockExpiresUnlessReconnected(t *testing.T) {
	ctx := context.Background()
	owner, other := openTwo(t)
	const ttl = time.Second // far longer than the short partition, however loaded the machine

	l, err := owner.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("me"), TTL: ttl})
	require.NoError(t, err)
	lost, err := l.Lock(ctx)
	require.NoError(t, err)

	// A short partition, healed before the TTL, keeps the lock.
	memfault.Disconnect(owner)
	time.Sleep(ttl / 10)
	memfault.Reconnect(owner)
	time.Sleep(ttl * 2)
	requireOpen(t, lost, "lock after a short partition")

	// A long partition loses it, and a blocked contender gets it.
	lo, err := other.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("other")})
	require.NoError(t, err)

	got := make(chan error, 1)
	go func() {
		_, err := lo.Lock(ctx)
		got <- err
	}()

	memfault.Disconnect(owner)
	requireSignal(t, lost, "lost after partition")

	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(storetest.Patience):
		t.Fatal("contender not granted after expiry")
	}

	memfault.Reconnect(owner)
	assert.ErrorIs(t, l.Unlock(ctx), errNotLocked)

	p, err := owner.Get(ctx, "lock", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("other"), p.Value)
	require.NoError(t, lo.Unlock(ctx))
}

func TestDisconnectWakesBlockedLock(t *testing.T) {
	ctx := context.Background()
	holder, waiter := openTwo(t)

	storetest.HeldLock(t, ctx, holder, "lock", nil)
	lw, err := waiter.NewLock(ctx, "lock", nil)
	require.NoError(t, err)

	blocked := storetest.StartLock(ctx, lw, 20*time.Millisecond)
	memfault.Disconnect(waiter)
	assert.ErrorIs(t, blocked.Wait(t, "blocked Lock did not return on Disconnect").Err, errDisconnected)
}

func TestDisconnectKeepAlivePut(t *testing.T) {
	ctx := context.Background()
	w, r := openTwo(t)

	opts := &store.WriteOptions{TTL: 200 * time.Millisecond, KeepAlive: true}
	require.NoError(t, w.Put(ctx, "k", []byte("v"), opts))

	memfault.Disconnect(w)
	time.Sleep(400 * time.Millisecond)

	ok, err := r.Exists(ctx, "k", nil)
	require.NoError(t, err)
	assert.False(t, ok, "keep-alive stops on disconnect")
}

func TestWatchAcrossDisconnect(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	s, other := openTwo(t)

	require.NoError(t, other.Put(ctx, "k", []byte("v0"), nil))

	events, err := s.Watch(ctx, "k", nil)
	require.NoError(t, err)
	tree, err := s.WatchTree(ctx, "", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("v0"), storetest.NextPair(t, events).Value)
	assert.Equal(t, []string{"k"}, storetest.Keys(storetest.NextList(t, tree)))

	memfault.Disconnect(s)
	for _, v := range []string{"v1", "v2", "v3"} {
		require.NoError(t, other.Put(ctx, "k", []byte(v), nil))
	}
	require.NoError(t, other.Put(ctx, "k2", []byte("x"), nil))

	select {
	case p := <-events:
		t.Fatalf("event delivered while disconnected: %+v", p)
	case <-time.After(50 * time.Millisecond):
	}

	memfault.Reconnect(s)
	assert.Equal(t, []byte("v3"), storetest.NextPair(t, events).Value, "current state first")
	assert.Equal(t, []string{"k", "k2"}, storetest.Keys(storetest.NextList(t, tree)))

	require.NoError(t, other.Put(ctx, "k", []byte("v4"), nil))
	assert.Equal(t, []byte("v4"), storetest.NextPair(t, events).Value, "then continues")

	// Nothing changed during a partition: nothing to deliver on reconnect.
	memfault.Disconnect(s)
	memfault.Reconnect(s)
	require.NoError(t, other.Put(ctx, "k", []byte("v5"), nil))
	assert.Equal(t, []byte("v5"), storetest.NextPair(t, events).Value)
}

func TestStopStartServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	name := freshName(t)
	s, other := openStore(t, name), openStore(t, name)

	require.NoError(t, s.Put(ctx, "persistent", []byte("p"), nil))
	require.NoError(t, s.Put(ctx, "lease", []byte("l"), &store.WriteOptions{TTL: 100 * time.Millisecond, KeepAlive: true}))
	require.NoError(t, s.Put(ctx, "long", []byte("l"), &store.WriteOptions{TTL: time.Hour, KeepAlive: true}))

	l, err := s.NewLock(ctx, "lock", &store.LockOptions{TTL: 100 * time.Millisecond})
	require.NoError(t, err)
	lost, err := l.Lock(ctx)
	require.NoError(t, err)

	events, err := other.Watch(ctx, "lease", nil)
	require.NoError(t, err)
	storetest.NextPair(t, events)

	stopServer(name)
	stopServer(name) // idempotent

	for _, h := range []*Store{s, other} {
		_, err := h.Get(ctx, "persistent", nil)
		require.ErrorIs(t, err, errServerDown)
		require.ErrorIs(t, err, store.ErrNotReachable)
	}

	// Owners cannot renew: the lock is lost during the outage.
	requireSignal(t, lost, "lock lost during outage")

	startServer(name)
	startServer(name)

	p, err := other.Get(ctx, "persistent", nil)
	require.NoError(t, err, "data survives")
	assert.Equal(t, []byte("p"), p.Value)

	for key, want := range map[string]bool{"lease": false, "lock": false, "long": true} {
		ok, err := other.Exists(ctx, key, nil)
		require.NoError(t, err)
		assert.Equal(t, want, ok, key)
	}

	ev := storetest.NextPair(t, events)
	assert.Equal(t, "lease", ev.Key)
	assert.Nil(t, ev.Value, "the expiry is delivered once the server is back")

	// Keep-alive resumed after the restart.
	time.Sleep(200 * time.Millisecond)
	ok, err := other.Exists(ctx, "long", nil)
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestStopServerBeforeOpen(t *testing.T) {
	name := freshName(t)
	stopServer(name)

	s := openStore(t, name)
	assert.ErrorIs(t, s.Put(context.Background(), "k", nil, nil), errServerDown)

	startServer(name)
	require.NoError(t, s.Put(context.Background(), "k", nil, nil))
}

func TestShortOutageKeepsLeases(t *testing.T) {
	ctx := context.Background()
	name := freshName(t)
	s := openStore(t, name)
	const ttl = time.Second // far longer than the short outage, however loaded the machine

	require.NoError(t, s.Put(ctx, "lease", []byte("l"), &store.WriteOptions{TTL: ttl, KeepAlive: true}))

	stopServer(name)
	time.Sleep(ttl / 10)
	startServer(name)
	time.Sleep(2 * ttl)

	ok, err := s.Exists(ctx, "lease", nil)
	require.NoError(t, err)
	assert.True(t, ok, "keep-alive resumes after a short outage")
}

func TestLoseData(t *testing.T) {
	ctx := context.Background()
	name := freshName(t)
	s := openStore(t, name)

	require.NoError(t, s.Put(ctx, "a", []byte("1"), nil))
	old, err := s.Get(ctx, "a", nil)
	require.NoError(t, err)
	l, err := s.NewLock(ctx, "lock", &store.LockOptions{Value: []byte("me"), TTL: time.Minute})
	require.NoError(t, err)
	lost, err := l.Lock(ctx)
	require.NoError(t, err)
	events, err := s.Watch(ctx, "a", nil)
	require.NoError(t, err)
	<-events // the current value

	loseData(name)

	_, err = s.Get(ctx, "a", nil)
	require.ErrorIs(t, err, store.ErrKeyNotFound)
	select {
	case p := <-events:
		assert.Empty(t, p.Value, "the watch sees the key deleted")
	case <-time.After(10 * time.Second):
		t.Fatal("no delete event")
	}
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("the lock was not lost")
	}

	// Indexes start again: a new write may carry an index seen before.
	require.NoError(t, s.Put(ctx, "a", []byte("2"), nil))
	again, err := s.Get(ctx, "a", nil)
	require.NoError(t, err)
	assert.LessOrEqual(t, again.LastIndex, old.LastIndex)
}

// After LoseData hands an index out again, a compare-and-swap with a pair
// read before the loss (its value another's) is refused, though the index
// matches; the same pair without a Value compares the index only.
func TestAtomicPutComparesValueAtReusedIndex(t *testing.T) {
	ctx := context.Background()
	name := freshName(t)
	s := openStore(t, name)

	require.NoError(t, s.Put(ctx, "a", []byte("before"), nil))
	old, err := s.Get(ctx, "a", nil)
	require.NoError(t, err)

	loseData(name)
	for {
		require.NoError(t, s.Put(ctx, "a", []byte("after"), nil))
		now, err := s.Get(ctx, "a", nil)
		require.NoError(t, err)
		if now.LastIndex >= old.LastIndex {
			require.Equal(t, old.LastIndex, now.LastIndex, "setup: the index is handed out again")
			break
		}
	}

	ok, _, err := s.AtomicPut(ctx, "a", []byte("late"), old, nil)
	require.ErrorIs(t, err, store.ErrKeyModified)
	assert.False(t, ok, "a compare-and-swap over another value at a reused index")
	got, err := s.Get(ctx, "a", nil)
	require.NoError(t, err)
	assert.Equal(t, "after", string(got.Value))

	ok, _, err = s.AtomicPut(ctx, "a", []byte("index only"), &store.KVPair{Key: "a", LastIndex: old.LastIndex}, nil)
	require.NoError(t, err)
	assert.True(t, ok, "a pair without a Value compares the index only")
}
