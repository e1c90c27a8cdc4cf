package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
)

// Fenced checks the fenced writes of s, which must implement
// fenced.Putter, on fresh keys under dir, in subtests:
//
//   - Lands: with the guard key's pair as AtomicPut returned it, and as
//     Get read it, the write lands, also over an existing value and at a
//     key several levels deep whose parents do not exist yet.
//   - Stale: after the guard key was written again, a write with the old
//     pair is refused (fenced.ErrGuardChanged) and nothing is written,
//     not even the parents of a key several levels deep.
//   - Missing: with the guard key deleted, or a nil guard, the write is
//     refused and nothing is written.
//   - OtherValue: a guard whose LastIndex is the guard key's current one
//     but whose Value is not (the key was written anew at a reused index,
//     as after a server that lost its data) is refused, and nothing is
//     written; AtomicDelete with it deletes nothing.
//
// The guard key's values are JSON objects with a "LastIndex" member unique
// to each write, as the election engine's records are (kvtools' Redis
// compare-and-swap compares that member). The tree at dir is deleted at
// the end.
func Fenced(t *testing.T, s store.Store, dir string) {
	t.Helper()
	p, ok := s.(fenced.Putter)
	if !ok {
		t.Fatalf("%T does not implement fenced.Putter", s)
	}
	CleanupTree(t, s, dir)
	ctx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	holds := func(t *testing.T, key, want string) {
		t.Helper()
		pair, err := s.Get(ctx(t), key, &store.ReadOptions{Consistent: true})
		if err != nil || string(pair.Value) != want {
			t.Fatalf("Get(%q) = %v, %v; want %q", key, pair, err, want)
		}
	}
	absent := func(t *testing.T, key string) {
		t.Helper()
		if pair, err := s.Get(ctx(t), key, &store.ReadOptions{Consistent: true}); !errors.Is(err, store.ErrKeyNotFound) {
			t.Fatalf("Get(%q) = %v, %v; want store.ErrKeyNotFound", key, pair, err)
		}
	}
	refused := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, fenced.ErrGuardChanged) {
			t.Fatalf("FencedPut = %v, want fenced.ErrGuardChanged", err)
		}
	}
	const term1, term2 = `{"LastIndex":1,"Term":1}`, `{"LastIndex":2,"Term":2}`
	record := func(t *testing.T, key, value string, prev *store.KVPair) *store.KVPair {
		t.Helper()
		ok, pair, err := s.AtomicPut(ctx(t), key, []byte(value), prev, nil)
		if err != nil || !ok {
			t.Fatalf("AtomicPut(%q) = %v, %v", key, ok, err)
		}
		return pair
	}
	t.Run("Lands", func(t *testing.T) {
		g, data, deep := dir+"/lands/guard", dir+"/lands/data", dir+"/lands/a/b/data"
		pair := record(t, g, term1, nil)
		if err := p.FencedPut(ctx(t), data, []byte("one"), g, pair); err != nil {
			t.Fatalf("FencedPut with the pair AtomicPut returned: %v", err)
		}
		holds(t, data, "one")
		read, err := s.Get(ctx(t), g, &store.ReadOptions{Consistent: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.FencedPut(ctx(t), data, []byte("two"), g, read); err != nil {
			t.Fatalf("FencedPut with the pair Get read: %v", err)
		}
		holds(t, data, "two")
		if err := p.FencedPut(ctx(t), deep, []byte("deep"), g, pair); err != nil {
			t.Fatalf("FencedPut to a key whose parents do not exist: %v", err)
		}
		holds(t, deep, "deep")
		holds(t, g, term1)
	})
	t.Run("Stale", func(t *testing.T) {
		g, data, fresh := dir+"/stale/guard", dir+"/stale/data", dir+"/stale/fresh"
		old := record(t, g, term1, nil)
		if err := p.FencedPut(ctx(t), data, []byte("live"), g, old); err != nil {
			t.Fatal(err)
		}
		cur := record(t, g, term2, old)
		refused(t, p.FencedPut(ctx(t), data, []byte("stale"), g, old))
		refused(t, p.FencedPut(ctx(t), fresh, []byte("stale"), g, old))
		refused(t, p.FencedPut(ctx(t), dir+"/stale/a/b/data", []byte("stale"), g, old))
		holds(t, data, "live")
		absent(t, fresh)
		absent(t, dir+"/stale/a") // not even a parent
		if err := p.FencedPut(ctx(t), data, []byte("next"), g, cur); err != nil {
			t.Fatalf("FencedPut with the current pair: %v", err)
		}
		holds(t, data, "next")
	})
	t.Run("Missing", func(t *testing.T) {
		g, data, fresh := dir+"/missing/guard", dir+"/missing/data", dir+"/missing/fresh"
		pair := record(t, g, term1, nil)
		if err := p.FencedPut(ctx(t), data, []byte("live"), g, pair); err != nil {
			t.Fatal(err)
		}
		refused(t, p.FencedPut(ctx(t), data, []byte("nil"), g, nil))
		refused(t, p.FencedPut(ctx(t), data, []byte("other"), dir+"/missing/never", pair))
		if err := s.Delete(ctx(t), g); err != nil {
			t.Fatal(err)
		}
		refused(t, p.FencedPut(ctx(t), data, []byte("gone"), g, pair))
		refused(t, p.FencedPut(ctx(t), fresh, []byte("gone"), g, pair))
		holds(t, data, "live")
		absent(t, fresh)
	})
	t.Run("OtherValue", func(t *testing.T) {
		g, data := dir+"/other/guard", dir+"/other/data"
		first := record(t, g, term1, nil)
		now := record(t, g, term2, first)
		// term1 at now's index: the pair of a writer that saw a record of
		// its own at the index the guard key holds another one at.
		forged := &store.KVPair{Key: now.Key, Value: first.Value, LastIndex: now.LastIndex}
		refused(t, p.FencedPut(ctx(t), data, []byte("stale"), g, forged))
		absent(t, data)
		if ok, err := s.AtomicDelete(ctx(t), g, forged); ok || err == nil {
			t.Fatalf("AtomicDelete with another value at the current index = %v, %v; want a refusal", ok, err)
		}
		holds(t, g, term2)
		if ok, err := s.AtomicDelete(ctx(t), g, now); !ok || err != nil {
			t.Fatalf("AtomicDelete with the current pair = %v, %v", ok, err)
		}
		absent(t, g)
	})
}

// NotFenced fails t if s implements fenced.Putter: a store that cannot
// check a write against another key atomically must not claim to.
func NotFenced(t *testing.T, s store.Store) {
	t.Helper()
	if _, ok := s.(fenced.Putter); ok {
		t.Fatalf("%T implements fenced.Putter", s)
	}
}
