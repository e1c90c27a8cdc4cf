package memory

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestWatchMissingKeyDeleteAndExpiry(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	s := openStore(t, freshName(t))

	events, err := s.Watch(ctx, "/k/", nil)
	require.NoError(t, err)

	first := storetest.NextPair(t, events)
	assert.Equal(t, &store.KVPair{Key: "k"}, first, "missing key: empty pair")

	require.NoError(t, s.Put(ctx, "k", []byte("v"), nil))
	p := storetest.NextPair(t, events)
	assert.Equal(t, []byte("v"), p.Value)
	putIndex := p.LastIndex

	require.NoError(t, s.Delete(ctx, "k"))
	p = storetest.NextPair(t, events)
	assert.Equal(t, "k", p.Key)
	assert.Nil(t, p.Value, "delete: empty pair")
	assert.Greater(t, p.LastIndex, putIndex, "delete event carries the deletion index")

	require.NoError(t, s.Put(ctx, "k", []byte("ttl"), &store.WriteOptions{TTL: 30 * time.Millisecond}))
	p = storetest.NextPair(t, events)
	assert.Equal(t, []byte("ttl"), p.Value)

	p = storetest.NextPair(t, events)
	assert.Nil(t, p.Value, "expiry: empty pair")
	assert.Greater(t, p.LastIndex, putIndex)

	cancel()
	requireClosed(t, events)
}

func TestWatchOrderNoCoalescing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	s := openStore(t, freshName(t))
	events, err := s.Watch(ctx, "k", nil)
	require.NoError(t, err)

	// Writers must not wait for the reader: write everything first.
	const n = 500
	for i := range n {
		require.NoError(t, s.Put(ctx, "k", []byte(strconv.Itoa(i)), nil))
	}

	storetest.NextPair(t, events) // initial state

	last := uint64(0)
	for i := range n {
		p := storetest.NextPair(t, events)
		assert.Equal(t, strconv.Itoa(i), string(p.Value))
		assert.Greater(t, p.LastIndex, last)
		last = p.LastIndex
	}
}

func TestWatchTree(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	s := openStore(t, freshName(t))
	require.NoError(t, s.Put(ctx, "dir/a", []byte("a"), nil))

	events, err := s.WatchTree(ctx, "dir", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"dir/a"}, storetest.Keys(storetest.NextList(t, events)))

	require.NoError(t, s.Put(ctx, "other", []byte("x"), nil)) // not under dir
	require.NoError(t, s.Put(ctx, "dir", []byte("x"), nil))   // dir itself is not a child
	require.NoError(t, s.Put(ctx, "dir/b/c", []byte("c"), &store.WriteOptions{TTL: 50 * time.Millisecond}))
	assert.Equal(t, []string{"dir/a", "dir/b/c"}, storetest.Keys(storetest.NextList(t, events)))

	assert.Equal(t, []string{"dir/a"}, storetest.Keys(storetest.NextList(t, events)), "expiry")

	require.NoError(t, s.Delete(ctx, "dir/a"))
	l := storetest.NextList(t, events)
	assert.NotNil(t, l)
	assert.Empty(t, l, "delete")

	empty, err := s.WatchTree(ctx, "nothing", nil)
	require.NoError(t, err)
	l = storetest.NextList(t, empty)
	assert.NotNil(t, l)
	assert.Empty(t, l)
}

func TestWatchClosesOnHandleClose(t *testing.T) {
	name := freshName(t)
	s := openStore(t, name)
	ctx := context.Background()

	events, err := s.Watch(ctx, "k", nil)
	require.NoError(t, err)
	tree, err := s.WatchTree(ctx, "k", nil)
	require.NoError(t, err)

	require.NoError(t, s.Close())
	requireClosed(t, events)
	requireClosed(t, tree)
}

func TestWatchDoesNotLeakWithoutReader(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	ctx, cancel := context.WithCancel(context.Background())
	s, err := Open(context.Background(), Config{Name: freshName(t)})
	require.NoError(t, err)

	_, err = s.Watch(ctx, "k", nil)
	require.NoError(t, err)
	_, err = s.WatchTree(ctx, "", nil)
	require.NoError(t, err)

	for i := range 10 {
		require.NoError(t, s.Put(ctx, "k", []byte(strconv.Itoa(i)), nil))
	}

	// Nobody reads; cancelling the context alone must end the goroutines.
	cancel()

	// Close waits for the handle's goroutines; the assertion that they ended
	// on cancel is goleak's, deferred above, so do not Close before it.
	t.Cleanup(func() { _ = s.Close() })
}
