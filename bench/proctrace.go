package main

import (
	"context"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership"
)

// tracing is a store.Store that reports every call's start and return and
// every watch event to the parent, stamped on the shared clock, so that a
// handoff can be cut into its phases (release, watch push, acquire).
type tracing struct {
	store.Store
	ev     *eventWriter
	relays sync.WaitGroup
}

// MinTTL passes on the wrapped store's minimum TTL (an optional interface
// that embedding would hide).
func (t *tracing) MinTTL() time.Duration {
	if m, ok := t.Store.(interface{ MinTTL() time.Duration }); ok {
		return m.MinTTL()
	}
	return leadership.MinTTL
}

// call reports the start of method and returns the function that reports
// its return.
func (t *tracing) call(method string) func() {
	t.ev.emit(pkCall, 0, monoNow(), method+">")
	return func() { t.ev.emit(pkCall, 0, monoNow(), method+"<") }
}

func (t *tracing) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	defer t.call("Put")()
	return t.Store.Put(ctx, key, value, opts)
}

func (t *tracing) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	defer t.call("Get")()
	return t.Store.Get(ctx, key, opts)
}

func (t *tracing) Delete(ctx context.Context, key string) error {
	defer t.call("Delete")()
	return t.Store.Delete(ctx, key)
}

func (t *tracing) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	defer t.call("Exists")()
	return t.Store.Exists(ctx, key, opts)
}

func (t *tracing) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	defer t.call("AtomicPut")()
	return t.Store.AtomicPut(ctx, key, value, previous, opts)
}

func (t *tracing) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	defer t.call("AtomicDelete")()
	return t.Store.AtomicDelete(ctx, key, previous)
}

func (t *tracing) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	done := t.call("Watch")
	in, err := t.Store.Watch(ctx, key, opts)
	done()
	if err != nil || in == nil {
		return in, err
	}
	out := make(chan *store.KVPair)
	t.relays.Go(func() {
		defer close(out)
		for kv := range in {
			val := ""
			if kv != nil {
				val = string(kv.Value)
				if len(val) > 60 {
					val = val[:60]
				}
			}
			t.ev.emit(pkWatch, 0, monoNow(), val)
			select {
			case out <- kv:
			case <-ctx.Done():
			}
		}
	})
	return out, nil
}
