package watch

import (
	"context"
	"sync"
	"testing"
	"time"
)

// receive reads one value from c, failing after a generous wait.
func receive[T any](t *testing.T, c <-chan T) (T, bool) {
	t.Helper()
	select {
	case v, ok := <-c:
		return v, ok
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received within 10s")
		panic("unreachable")
	}
}

// sending reports whether f has a delivery goroutine.
func sending[T any](f *Feed[T]) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sending
}

func TestFeedFillsTheBufferWithoutAGoroutine(t *testing.T) {
	var wg sync.WaitGroup
	f := NewFeed[int](2, &wg, nil)
	f.Push(1)
	f.Push(2)
	if sending(f) {
		t.Fatal("a delivery goroutine runs while the buffer had room")
	}
	for want := 1; want <= 2; want++ {
		if v, _ := receive(t, f.C()); v != want {
			t.Fatalf("got %d, want %d", v, want)
		}
	}
	f.Stop()
	if _, ok := receive(t, f.C()); ok {
		t.Fatal("the channel stays open after Stop")
	}
	wg.Wait()
}

func TestFeedKeepsOrderPastAFullBuffer(t *testing.T) {
	var wg sync.WaitGroup
	f := NewFeed[int](1, &wg, nil)
	const n = 100
	for i := range n {
		f.Push(i)
	}
	if !sending(f) {
		t.Fatal("no delivery goroutine while values wait for room")
	}
	for want := range n {
		if v, _ := receive(t, f.C()); v != want {
			t.Fatalf("got %d, want %d", v, want)
		}
	}
	// Delivered: the goroutine ends by itself, and the next value goes
	// straight into the buffer again.
	deadline := time.Now().Add(10 * time.Second)
	for sending(f) {
		if time.Now().After(deadline) {
			t.Fatal("the delivery goroutine still runs with nothing to deliver")
		}
		time.Sleep(time.Millisecond)
	}
	f.Push(n)
	if sending(f) {
		t.Fatal("a delivery goroutine started for a value the buffer had room for")
	}
	f.Stop()
	wg.Wait()
}

func TestFeedStopsWithAnyContext(t *testing.T) {
	for _, which := range []int{0, 1} {
		var wg sync.WaitGroup
		ctxs := make([]context.Context, 2)
		cancels := make([]context.CancelFunc, 2)
		for i := range ctxs {
			ctxs[i], cancels[i] = context.WithCancel(context.Background())
		}
		stopped := make(chan struct{})
		f := NewFeed[int](1, &wg, func() { close(stopped) }, ctxs...)
		f.Push(1)
		f.Push(2) // waits for room: a goroutine blocks on the reader
		cancels[which]()
		<-stopped
		wg.Wait() // the goroutine ended, and the channel is closed
		n := 0
		for range f.C() {
			n++
		}
		if n > 1 {
			t.Fatalf("context %d: %d values after the stop, the buffer holds 1", which, n)
		}
		f.Stop() // again: nothing happens
		for _, c := range cancels {
			c()
		}
	}
}

func TestFeedStartedOnAnEndedContext(t *testing.T) {
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := NewFeed[int](1, &wg, nil, ctx)
	wg.Wait()
	if _, ok := receive(t, f.C()); ok {
		t.Fatal("a feed of an ended context is open")
	}
	f.Push(1) // dropped, no panic
}

func TestFeedStopRacesPushes(t *testing.T) {
	var wg sync.WaitGroup
	calls := 0
	f := NewFeed[int](1, &wg, func() { calls++ })
	var pushers sync.WaitGroup
	for p := range 4 {
		pushers.Go(func() {
			for i := range 200 {
				f.Push(p*1000 + i)
			}
		})
	}
	for range 4 {
		pushers.Go(f.Stop)
	}
	pushers.Wait()
	wg.Wait()
	for range f.C() {
	}
	if calls != 1 {
		t.Fatalf("onStop ran %d times", calls)
	}
}
