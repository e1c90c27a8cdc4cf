package kv

import (
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestKeys(t *testing.T) {
	if k := NormalizeKey("/a/b/"); k != "a/b" {
		t.Fatalf("NormalizeKey = %q", k)
	}
	for _, c := range []struct {
		key, dir string
		under    bool
	}{{"a/b", "a", true}, {"a", "a", false}, {"ab/c", "a", false}, {"a", "", true}, {"", "", false}} {
		if Under(c.key, c.dir) != c.under {
			t.Errorf("Under(%q, %q) = %v", c.key, c.dir, !c.under)
		}
	}
	p := &store.KVPair{Key: "k", Value: []byte("v"), LastIndex: 3}
	c := ClonePair(p)
	c.Value[0] = 'x'
	if string(p.Value) != "v" || c.LastIndex != 3 || ClonePair(&store.KVPair{}).Value != nil {
		t.Fatalf("ClonePair shares or loses: %+v", c)
	}
}

func TestLockSpec(t *testing.T) {
	if s := NewLockSpec(nil, time.Minute, time.Second); s.TTL != time.Minute || s.Value == nil {
		t.Fatalf("defaults: %+v", s)
	}
	s := NewLockSpec(&store.LockOptions{Value: []byte("v"), TTL: time.Millisecond, DeleteOnUnlock: true}, time.Minute, time.Second)
	if s.TTL != time.Second || string(s.Value) != "v" || !s.DeleteOnUnlock {
		t.Fatalf("options: %+v", s)
	}
	if EffectiveTTL(-1, time.Second) != 0 || EffectiveTTL(time.Hour, time.Second) != time.Hour {
		t.Fatal("EffectiveTTL")
	}
}

func TestWaiters(t *testing.T) {
	w := Waiters{}
	a, b := w.Chan("a"), w.Chan("b")
	if w.Chan("a") != a {
		t.Fatal("a second channel for one key")
	}
	w.Wake("a")
	<-a
	w.WakeAll()
	<-b
	if len(w) != 0 {
		t.Fatalf("left: %v", w)
	}
}
