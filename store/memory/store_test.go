package memory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestNewErrors(t *testing.T) {
	ctx := context.Background()

	tests := []struct {
		name      string
		endpoints []string
		options   valkeyrie.Config
		check     func(t *testing.T, err error)
	}{
		{"no endpoint", nil, nil, func(t *testing.T, err error) { assert.ErrorIs(t, err, errNoName) }},
		{"empty name", []string{""}, nil, func(t *testing.T, err error) { assert.ErrorIs(t, err, errNoName) }},
		{"wrong config", []string{"x"}, struct{}{}, func(t *testing.T, err error) {
			var cfgErr *store.InvalidConfigurationError
			require.ErrorAs(t, err, &cfgErr)
			assert.Equal(t, StoreName, cfgErr.Store)
		}},
		{"wrong config pointer", []string{"x"}, &store.WriteOptions{}, func(t *testing.T, err error) {
			var cfgErr *store.InvalidConfigurationError
			assert.ErrorAs(t, err, &cfgErr)
		}},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv, err := valkeyrie.NewStore(ctx, StoreName, tt.endpoints, tt.options)
			require.Error(t, err)
			assert.Nil(t, kv)
			tt.check(t, err)
		})
	}

	_, err := Open(context.Background(), Config{Name: ""})
	assert.ErrorIs(t, err, errNoName)

	kv, err := valkeyrie.NewStore(ctx, StoreName, []string{freshName(t)}, &Config{})
	require.NoError(t, err)
	require.NoError(t, kv.Close())
}

func TestHandlesShareBackend(t *testing.T) {
	ctx := context.Background()
	name := freshName(t)
	a, b, other := openStore(t, name), openStore(t, name), openStore(t, freshName(t))

	require.NoError(t, a.Put(ctx, "k", []byte("v"), nil))

	p, err := b.Get(ctx, "k", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("v"), p.Value)

	_, err = other.Get(ctx, "k", nil)
	assert.ErrorIs(t, err, store.ErrKeyNotFound)
	assert.Equal(t, name, a.Name())
	assert.Equal(t, time.Millisecond, a.MinTTL())
}

func TestEmptyKey(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, freshName(t))
	prev := &store.KVPair{Key: "x", LastIndex: 1}

	ops := map[string]func(key string) error{
		"Put":    func(k string) error { return s.Put(ctx, k, nil, nil) },
		"Get":    func(k string) error { _, err := s.Get(ctx, k, nil); return err },
		"Delete": func(k string) error { return s.Delete(ctx, k) },
		"Exists": func(k string) error { _, err := s.Exists(ctx, k, nil); return err },
		"Watch":  func(k string) error { _, err := s.Watch(ctx, k, nil); return err },
		"NewLock": func(k string) error {
			_, err := s.NewLock(ctx, k, nil)
			return err
		},
		"AtomicPut": func(k string) error {
			_, _, err := s.AtomicPut(ctx, k, nil, nil, nil)
			return err
		},
		"AtomicDelete": func(k string) error {
			_, err := s.AtomicDelete(ctx, k, prev)
			return err
		},
	}

	for name, op := range ops {
		for _, key := range []string{"", "/", "//"} {
			assert.ErrorIs(t, op(key), errEmptyKey, "%s(%q)", name, key)
		}
	}
}

func TestKeyNormalisationAndCopies(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, freshName(t))

	value := []byte("abc")
	require.NoError(t, s.Put(ctx, "/a/b/", value, nil))
	value[0] = 'X' // Put must have copied.

	p, err := s.Get(ctx, "a/b", nil)
	require.NoError(t, err)
	assert.Equal(t, "a/b", p.Key)
	assert.Equal(t, []byte("abc"), p.Value)

	p.Value[0] = 'Y' // Get must return a copy.
	p2, err := s.Get(ctx, "/a/b", nil)
	require.NoError(t, err)
	assert.Equal(t, []byte("abc"), p2.Value)

	require.NoError(t, s.Put(ctx, "dir", nil, &store.WriteOptions{IsDir: true}))
	p3, err := s.Get(ctx, "dir", nil)
	require.NoError(t, err)
	assert.NotNil(t, p3.Value, "existing keys have a non-nil value")
}

func TestIndexStrictlyIncreasing(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, freshName(t))

	last := uint64(0)
	check := func(key string) {
		t.Helper()

		p, err := s.Get(ctx, key, nil)
		require.NoError(t, err)
		assert.Greater(t, p.LastIndex, last)
		last = p.LastIndex
	}

	require.NoError(t, s.Put(ctx, "a", []byte("1"), nil))
	check("a")
	assert.Equal(t, uint64(1), last, "the first write gets index 1")

	require.NoError(t, s.Put(ctx, "a", []byte("2"), nil))
	check("a")

	require.NoError(t, s.Put(ctx, "b", []byte("1"), nil))
	check("b")
	require.NoError(t, s.Delete(ctx, "b")) // takes an index too
	require.NoError(t, s.Put(ctx, "b", []byte("2"), nil))
	p, err := s.Get(ctx, "b", nil)
	require.NoError(t, err)
	assert.Equal(t, last+2, p.LastIndex)
	last = p.LastIndex

	ok, np, err := s.AtomicPut(ctx, "a", []byte("3"), &store.KVPair{LastIndex: 2}, nil)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Greater(t, np.LastIndex, last)

	p, err = s.Get(ctx, "a", nil)
	require.NoError(t, err)
	assert.Equal(t, np.LastIndex, p.LastIndex, "AtomicPut returns the new index")
}

func TestListAndDeleteTree(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, freshName(t))

	for _, k := range []string{"d", "d/b", "d/a", "d/a/x", "dd", "e"} {
		require.NoError(t, s.Put(ctx, k, []byte(k), nil))
	}

	pairs, err := s.List(ctx, "/d/", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"d/a", "d/a/x", "d/b"}, storetest.Keys(pairs))

	pairs, err = s.List(ctx, "e", nil)
	require.NoError(t, err)
	assert.NotNil(t, pairs)
	assert.Empty(t, pairs)

	_, err = s.List(ctx, "nope", nil)
	assert.ErrorIs(t, err, store.ErrKeyNotFound)

	require.NoError(t, s.Put(ctx, "only/child", []byte("c"), nil))
	pairs, err = s.List(ctx, "only", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"only/child"}, storetest.Keys(pairs))

	require.NoError(t, s.DeleteTree(ctx, "d"))
	require.NoError(t, s.DeleteTree(ctx, "nothing-here"))

	for _, k := range []string{"d", "d/a", "d/a/x", "d/b"} {
		ok, err := s.Exists(ctx, k, nil)
		require.NoError(t, err)
		assert.False(t, ok, k)
	}

	ok, err := s.Exists(ctx, "dd", nil)
	require.NoError(t, err)
	assert.True(t, ok, "a sibling sharing the prefix must survive")

	assert.ErrorIs(t, s.Delete(ctx, "d"), store.ErrKeyNotFound)
}

func TestAtomicErrors(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, freshName(t))

	_, _, err := s.AtomicPut(ctx, "k", []byte("v"), &store.KVPair{Key: "k", LastIndex: 1}, nil)
	assert.ErrorIs(t, err, store.ErrKeyNotFound)

	ok, p, err := s.AtomicPut(ctx, "k", []byte("v"), nil, nil)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, &store.KVPair{Key: "k", Value: []byte("v"), LastIndex: p.LastIndex}, p)

	ok, p2, err := s.AtomicPut(ctx, "k", []byte("w"), nil, nil)
	assert.False(t, ok)
	assert.Nil(t, p2)
	assert.ErrorIs(t, err, store.ErrKeyExists)

	stale := &store.KVPair{Key: "k", LastIndex: p.LastIndex + 100}
	_, _, err = s.AtomicPut(ctx, "k", []byte("w"), stale, nil)
	assert.Equal(t, store.ErrKeyModified, err)

	_, err = s.AtomicDelete(ctx, "k", nil)
	assert.ErrorIs(t, err, store.ErrPreviousNotSpecified)

	ok, err = s.AtomicDelete(ctx, "k", stale)
	assert.False(t, ok)
	assert.Equal(t, store.ErrKeyModified, err)

	ok, err = s.AtomicDelete(ctx, "k", p)
	require.NoError(t, err)
	assert.True(t, ok)

	_, err = s.AtomicDelete(ctx, "k", p)
	assert.ErrorIs(t, err, store.ErrKeyNotFound)
}

func TestTTL(t *testing.T) {
	ctx := context.Background()
	name := freshName(t)
	s := openStore(t, name)

	require.NoError(t, s.Put(ctx, "ttl", []byte("v"), &store.WriteOptions{TTL: 50 * time.Millisecond}))
	require.NoError(t, s.Put(ctx, "made-persistent", []byte("v"), &store.WriteOptions{TTL: 50 * time.Millisecond}))
	require.NoError(t, s.Put(ctx, "made-persistent", []byte("v2"), nil))
	require.NoError(t, s.Put(ctx, "kept", []byte("v"), &store.WriteOptions{TTL: 50 * time.Millisecond, KeepAlive: true}))

	time.Sleep(150 * time.Millisecond)

	exists := func(k string) bool {
		t.Helper()

		ok, err := s.Exists(ctx, k, nil)
		require.NoError(t, err)

		return ok
	}

	assert.False(t, exists("ttl"))
	assert.True(t, exists("made-persistent"))
	assert.True(t, exists("kept"), "KeepAlive keys live as long as their writer")

	// Once the writer closes, a kept-alive key expires one TTL later.
	w := openStore(t, name)
	require.NoError(t, w.Put(ctx, "by-w", []byte("v"), &store.WriteOptions{TTL: 100 * time.Millisecond, KeepAlive: true}))
	time.Sleep(200 * time.Millisecond)
	assert.True(t, exists("by-w"))
	require.NoError(t, w.Close())
	assert.True(t, exists("by-w"), "Close must not remove kept-alive keys at once")
	time.Sleep(200 * time.Millisecond)
	assert.False(t, exists("by-w"))

	_, err := s.List(ctx, "ttl", nil)
	assert.ErrorIs(t, err, store.ErrKeyNotFound)
}

func TestClosedHandle(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, freshName(t))
	l, err := s.NewLock(ctx, "l", nil)
	require.NoError(t, err)

	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")

	_, lockErr := l.Lock(ctx)

	errs := []error{
		s.Put(ctx, "k", nil, nil),
		second(s.Get(ctx, "k", nil)),
		s.Delete(ctx, "k"),
		second(s.Exists(ctx, "k", nil)),
		second(s.Watch(ctx, "k", nil)),
		second(s.WatchTree(ctx, "k", nil)),
		second(s.NewLock(ctx, "k", nil)),
		second(s.List(ctx, "k", nil)),
		s.DeleteTree(ctx, "k"),
		third(s.AtomicPut(ctx, "k", nil, nil, nil)),
		second(s.AtomicDelete(ctx, "k", &store.KVPair{})),
		lockErr,
		l.Unlock(ctx),
	}

	for i, err := range errs {
		assert.ErrorIs(t, err, errClosed, "call %d", i)
		assert.ErrorIs(t, err, store.ErrNotReachable, "call %d", i)
	}
}

func TestCanceledContext(t *testing.T) {
	s := openStore(t, freshName(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	assert.ErrorIs(t, s.Put(ctx, "k", nil, nil), context.Canceled)
	assert.ErrorIs(t, second(s.Get(ctx, "k", nil)), context.Canceled)
	assert.ErrorIs(t, second(s.Watch(ctx, "k", nil)), context.Canceled)
	assert.ErrorIs(t, s.DeleteTree(ctx, "k"), context.Canceled)

	_, err := valkeyrie.NewStore(ctx, StoreName, []string{"x"}, nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func second[T any](_ T, err error) error { return err }

func third[A, B any](_ A, _ B, err error) error { return err }

func TestErrorsWrapNotReachable(t *testing.T) {
	for _, err := range []error{errClosed, errDisconnected, errServerDown} {
		assert.True(t, errors.Is(err, store.ErrNotReachable), err.Error())
	}
}
