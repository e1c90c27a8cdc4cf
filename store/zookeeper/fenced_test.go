package zookeeper

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// Fenced writes on a store from Open: see storetest.Fenced.
func TestFencedPut(t *testing.T) {
	storetest.Fenced(t, openSingle(t), storetest.Dir(freshKey("fenced")))
}

// A refused fenced write to a key whose parents do not exist creates none
// of them: the parents are created in the same multi as the node.
func TestFencedPutRefusedCreatesNoParent(t *testing.T) {
	s := openSingle(t)
	dir := storetest.Dir(freshKey("fenced"))
	storetest.CleanupTree(t, s, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ok, old, err := s.AtomicPut(ctx, dir+"/guard", []byte("1"), nil, nil)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if ok, _, err := s.AtomicPut(ctx, dir+"/guard", []byte("2"), old, nil); err != nil || !ok {
		t.Fatal(ok, err)
	}
	err = s.(fenced.Putter).FencedPut(ctx, dir+"/a/b/data", []byte("stale"), dir+"/guard", old)
	if !errors.Is(err, fenced.ErrGuardChanged) {
		t.Fatalf("FencedPut = %v, want fenced.ErrGuardChanged", err)
	}
	if _, err := s.Get(ctx, dir+"/a", nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("Get(%q): %v, want store.ErrKeyNotFound", dir+"/a", err)
	}
}

// kvtools' store, given to Wrap, cannot write fenced: the result does not
// claim to.
func TestWrappedNotFenced(t *testing.T) {
	if s, ok := Wrap(kvtoolsStore(t, servers(t, envSingle)), time.Second).(fenced.Putter); ok {
		t.Fatalf("Wrap returned a %T, which implements fenced.Putter", s)
	}
}
