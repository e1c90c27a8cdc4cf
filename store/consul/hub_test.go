package consul

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

func present(m uint64) *api.KVPair {
	return &api.KVPair{Key: "k", Value: []byte(fmt.Sprint(m)), ModifyIndex: m}
}

// next returns what the watcher's reader gets now: "" for nothing, "m<i>"
// for a pair of index i, "x<i>" for an empty pair of index i.
func next(w *watcher) string {
	p := w.take()
	switch {
	case p == nil:
		return ""
	case p.Value == nil:
		return fmt.Sprintf("x%d", p.LastIndex)
	default:
		return fmt.Sprintf("m%d", p.LastIndex)
	}
}

// The watcher takes the states the hub and its first read offer in any
// order, and passes on only newer ones.
func TestWatcherOrder(t *testing.T) {
	type step struct {
		o       observation
		confirm bool   // offer's answer
		want    string // what the reader gets then
	}
	first := func(p *api.KVPair, epoch uint64) observation {
		return observation{pair: p, epoch: epoch, first: true}
	}
	hub := func(p *api.KVPair, index, epoch uint64) observation {
		return observation{pair: p, index: index, epoch: epoch}
	}
	for name, steps := range map[string][]step{
		"existing key, older and newer replies": {
			{o: first(present(10), 3), want: "m10"},
			{o: hub(present(5), 8, 3), want: ""},   // an older reply
			{o: hub(present(10), 12, 4), want: ""}, // no change
			{o: hub(present(12), 12, 5), want: "m12"},
			{o: hub(nil, 11, 5), want: ""}, // missing in a reply older than m12
			{o: hub(nil, 13, 6), want: "x13"},
			{o: hub(present(12), 12, 5), want: ""}, // late, older than the delete
			{o: hub(present(14), 14, 7), want: "m14"},
		},
		"missing key, then a reply that cannot be placed": {
			{o: first(nil, 3), want: "x0"},
			{o: hub(present(7), 7, 3), confirm: true, want: ""}, // before or after the read?
			{o: hub(nil, 9, 4), want: ""},                       // after it: missing, at 9
			{o: hub(present(8), 8, 3), want: ""},                // older than 9
			{o: hub(present(10), 10, 5), want: "m10"},
		},
		"missing key, read before the hub's first query": {
			{o: first(nil, 0), want: "x0"},
			{o: hub(present(7), 7, 1), want: "m7"},
		},
		"missing key, created after the read": {
			{o: first(nil, 3), want: "x0"},
			{o: hub(nil, 5, 2), want: ""},
			{o: hub(present(7), 7, 4), want: "m7"},
		},
		"the hub first, then a read showing the key missing": {
			{o: hub(present(7), 7, 2), want: "m7"},
			{o: first(nil, 2), confirm: true, want: ""},
			{o: hub(present(7), 8, 2), want: ""},
			{o: hub(nil, 9, 3), want: "x9"},
		},
		"the hub first, then an older read": {
			{o: hub(present(9), 9, 2), want: "m9"},
			{o: first(present(7), 2), want: ""},
			{o: hub(present(11), 11, 3), want: "m11"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := &watcher{key: "k", ready: make(chan struct{}, 1)}
			for i, s := range steps {
				if c := w.offer(s.o); c != s.confirm {
					t.Errorf("step %d: offer(%+v) = %v, want %v", i, s.o, c, s.confirm)
				}
				if got := next(w); got != s.want {
					t.Errorf("step %d: offer(%+v): reader gets %q, want %q", i, s.o, got, s.want)
				}
			}
		})
	}
}

// A slow reader gets the latest state, and the hub never waits for it.
func TestWatcherCoalesces(t *testing.T) {
	w := &watcher{key: "k", ready: make(chan struct{}, 1)}
	for m := uint64(1); m <= 5; m++ {
		w.offer(observation{pair: present(m), index: m, epoch: m})
	}
	if got := next(w); got != "m5" {
		t.Fatalf("reader gets %q, want m5", got)
	}
	if got := next(w); got != "" {
		t.Fatalf("then %q, want nothing", got)
	}
}

func TestCommonPrefix(t *testing.T) {
	set := func(keys ...string) map[string]*entry {
		m := map[string]*entry{}
		for _, k := range keys {
			m[k] = &entry{}
		}
		return m
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"a/b/leader"}, "a/b/leader"},
		{[]string{"a/b/1", "a/b/10"}, "a/b/"},
		{[]string{"a/b/1", "a/c/1"}, "a/"},
		{[]string{"a/", "a/x"}, "a/"},
		{[]string{"a/b", "a/b/c"}, "a/"},
		{[]string{"x", "y/z"}, ""},
		{[]string{"ab/c", "ac/d"}, ""},
	} {
		if got := commonPrefix(set(c.keys...)); got != c.want {
			t.Errorf("commonPrefix(%q) = %q, want %q", c.keys, got, c.want)
		}
	}
}

// countingProxy forwards TCP connections to target and counts them.
type countingProxy struct {
	ln       net.Listener
	target   string
	accepted atomic.Int64
	open     atomic.Int64
	maxOpen  atomic.Int64
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

func newCountingProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			n := p.open.Add(1)
			for {
				m := p.maxOpen.Load()
				if n <= m || p.maxOpen.CompareAndSwap(m, n) {
					break
				}
			}
			p.wg.Go(func() { p.serve(c) })
		}
	})
	t.Cleanup(p.close)
	return p
}

func (p *countingProxy) addr() string { return p.ln.Addr().String() }

func (p *countingProxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *countingProxy) serve(client net.Conn) {
	defer p.open.Add(-1)
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.track(client, true)
	p.track(server, true)
	var pumps sync.WaitGroup
	copyClose := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
	}
	pumps.Go(func() { copyClose(server, client) })
	copyClose(client, server)
	pumps.Wait()
	p.track(client, false)
	p.track(server, false)
}

func (p *countingProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// 1000 watches on one store share the hub's query: each sees its key's
// state, then a change, over a few connections (the agent refuses more
// than 200 from one address by default). Half the keys exist at first;
// the other half are created, the first half updated, all through the
// watched store.
func TestManyWatchesFewConnections(t *testing.T) {
	addr := agent(t)
	storetest.NoLeaks(t)
	const n, workers = 1000, 32
	direct := openAgent(t)
	dir := storetest.Dir(freshKey("many"))
	storetest.CleanupTree(t, direct, dir)
	ctx := storetest.Context(t, 60*time.Second)
	key := func(i int) string { return fmt.Sprintf("%s/%d", dir, i) }
	parallel := func(f func(i int) error) {
		t.Helper()
		var wg sync.WaitGroup
		var failed atomic.Int64
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for i := range next {
					if err := f(i); err != nil && failed.Add(1) == 1 {
						t.Errorf("%d: %v", i, err)
					}
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d of %d failed", failed.Load(), n)
		}
	}
	before := make([]*store.KVPair, n)
	parallel(func(i int) error {
		if i%2 == 1 {
			return nil
		}
		var err error
		_, before[i], err = direct.AtomicPut(ctx, key(i), []byte("before"), nil, nil)
		return err
	})

	proxy := newCountingProxy(t, addr)
	s, err := Open(ctx, testConfig(proxy.addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	start := time.Now()
	events := make([]<-chan *store.KVPair, n)
	parallel(func(i int) error {
		ch, err := s.Watch(ctx, key(i), nil)
		events[i] = ch
		return err
	})
	await := func(i int, what string, ok func(*store.KVPair) bool) error {
		for {
			select {
			case p, open := <-events[i]:
				if !open {
					return fmt.Errorf("%s: the watch closed", what)
				}
				if ok(p) {
					return nil
				}
			case <-ctx.Done():
				return fmt.Errorf("%s: %w", what, ctx.Err())
			}
		}
	}
	parallel(func(i int) error {
		return await(i, "first state", func(p *store.KVPair) bool {
			if before[i] == nil {
				return p.Value == nil
			}
			return string(p.Value) == "before" && p.LastIndex == before[i].LastIndex
		})
	})
	t.Logf("%d watches, first states after %v", n, time.Since(start))

	start = time.Now()
	after := make([]*store.KVPair, n)
	parallel(func(i int) error {
		var err error
		_, after[i], err = s.AtomicPut(ctx, key(i), []byte("after"), before[i], nil)
		return err
	})
	t.Logf("%d writes in %v", n, time.Since(start))
	parallel(func(i int) error {
		return await(i, "change", func(p *store.KVPair) bool {
			return string(p.Value) == "after" && p.LastIndex == after[i].LastIndex
		})
	})
	t.Logf("every watch saw its change %v after the first write", time.Since(start))
	accepted, maxOpen := proxy.accepted.Load(), proxy.maxOpen.Load()
	t.Logf("connections to the agent: %d opened, at most %d at once", accepted, maxOpen)
	if accepted > 70 {
		t.Errorf("%d connections opened, want at most 70", accepted)
	}
}

// Concurrent compare-and-swaps on one store, batched into transactions,
// keep their meaning: of two on the same version one wins, creating an
// existing key fails, and each winner's index is the key's.
func TestAtomicPutConcurrent(t *testing.T) {
	s := openAgent(t)
	dir := storetest.Dir(freshKey("cas"))
	storetest.CleanupTree(t, s, dir)
	ctx := storetest.Context(t, 30*time.Second)
	const n = 100
	key := func(i int) string { return fmt.Sprintf("%s/%d", dir, i) }
	firsts := make([]*store.KVPair, n)
	for i := range n {
		var err error
		if _, firsts[i], err = s.AtomicPut(ctx, key(i), []byte("0"), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	type outcome struct {
		pair *store.KVPair
		err  error
	}
	results := make([][3]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		for j := range 2 {
			wg.Go(func() {
				_, p, err := s.AtomicPut(ctx, key(i), fmt.Appendf(nil, "w%d", j), firsts[i], nil)
				results[i][j] = outcome{p, err}
			})
		}
		wg.Go(func() {
			_, p, err := s.AtomicPut(ctx, key(i), []byte("create"), nil, nil)
			results[i][2] = outcome{p, err}
		})
	}
	wg.Wait()
	for i := range n {
		r := results[i]
		if !errors.Is(r[2].err, store.ErrKeyExists) {
			t.Errorf("%d: create of an existing key: %v", i, r[2].err)
		}
		var winner *store.KVPair
		for j := range 2 {
			switch {
			case r[j].err == nil && winner == nil:
				winner = r[j].pair
			case r[j].err == nil:
				t.Errorf("%d: both compare-and-swaps on one version succeeded", i)
			case !errors.Is(r[j].err, store.ErrKeyModified):
				t.Errorf("%d: %v", i, r[j].err)
			}
		}
		if winner == nil {
			t.Errorf("%d: no compare-and-swap succeeded", i)
			continue
		}
		got, err := s.Get(ctx, key(i), nil)
		if err != nil || got.LastIndex != winner.LastIndex || string(got.Value) != string(winner.Value) {
			t.Errorf("%d: stored %+v (%v), winner %+v", i, got, err, winner)
		}
	}
}

// Gets batched together still tell missing keys from empty ones.
func TestGetConcurrent(t *testing.T) {
	s := openAgent(t)
	dir := storetest.Dir(freshKey("get"))
	storetest.CleanupTree(t, s, dir)
	ctx := storetest.Context(t, 30*time.Second)
	if err := s.Put(ctx, dir+"/empty", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, dir+"/full", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if p, err := s.Get(ctx, dir+"/empty", nil); err != nil || p.Value == nil || len(p.Value) != 0 || p.LastIndex == 0 {
				t.Errorf("Get(empty) = %+v, %v", p, err)
			}
			if p, err := s.Get(ctx, dir+"/full", &store.ReadOptions{}); err != nil || string(p.Value) != "v" {
				t.Errorf("Get(full) = %+v, %v", p, err)
			}
			if _, err := s.Get(ctx, dir+"/missing", nil); !errors.Is(err, store.ErrKeyNotFound) {
				t.Errorf("Get(missing): %v", err)
			}
		})
	}
	wg.Wait()
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Get(c, dir+"/full", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Get under a cancelled context: %v", err)
	}
}
