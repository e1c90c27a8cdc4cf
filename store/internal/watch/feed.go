package watch

import (
	"context"
	"sync"
)

// Feed is a watch's channel, fed by producers that never block on it
// (they may hold their own locks). A value goes straight into the
// channel's buffer while it has room; only while values wait for room
// does a goroutine wait for the reader, and it ends once they are
// delivered. An idle watch, or one whose reader keeps up, holds no
// goroutine. Values keep their order.
//
// The feed stops when any of its contexts ends, or on Stop: it drops the
// values still waiting for room, calls its onStop once, and closes the
// channel (a reader still receives what is in the buffer first).
type Feed[T any] struct {
	out     chan T
	wg      *sync.WaitGroup
	onStop  func()
	stopped chan struct{} // closed when the feed stops

	mu      sync.Mutex
	waiting []T  // values that found the buffer full, in order
	sending bool // a goroutine delivers waiting
	done    bool // stopped
	links   []func() bool
}

// NewFeed returns a feed whose channel buffers room values, stopped when
// any of ctxs ends. wg counts the feed until it has stopped and closed
// its channel, and its delivery goroutine while one runs; onStop (may be
// nil) runs once when the feed stops, with no lock of the feed held.
func NewFeed[T any](room int, wg *sync.WaitGroup, onStop func(), ctxs ...context.Context) *Feed[T] {
	f := &Feed[T]{out: make(chan T, room), wg: wg, onStop: onStop, stopped: make(chan struct{})}
	wg.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ctx := range ctxs {
		f.links = append(f.links, context.AfterFunc(ctx, f.Stop))
	}
	return f
}

// C returns the channel the feed delivers on.
func (f *Feed[T]) C() <-chan T { return f.out }

// Push delivers v after the values before it; it never blocks. A stopped
// feed drops v.
func (f *Feed[T]) Push(v T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	if len(f.waiting) == 0 {
		select {
		case f.out <- v:
			return
		default:
		}
	}
	f.waiting = append(f.waiting, v)
	if !f.sending {
		f.sending = true
		f.wg.Add(1)
		go f.send()
	}
}

// send delivers the waiting values, and ends when none is left or the
// feed stopped (closing the channel then, which Stop left to it).
func (f *Feed[T]) send() {
	defer f.wg.Done()
	for {
		f.mu.Lock()
		if f.done || len(f.waiting) == 0 {
			f.sending = false
			if f.done {
				close(f.out)
			}
			f.mu.Unlock()
			return
		}
		v := f.waiting[0]
		f.mu.Unlock()
		select {
		case f.out <- v:
			f.mu.Lock()
			if !f.done {
				var zero T
				f.waiting[0] = zero
				f.waiting = f.waiting[1:]
			}
			f.mu.Unlock()
		case <-f.stopped:
		}
	}
}

// Stop stops the feed: safe to call any number of times, from any
// goroutine.
func (f *Feed[T]) Stop() {
	f.mu.Lock()
	if f.done {
		f.mu.Unlock()
		return
	}
	f.done = true
	close(f.stopped)
	f.waiting = nil
	if !f.sending {
		close(f.out)
	}
	links := f.links
	f.links = nil
	f.mu.Unlock()
	for _, unlink := range links {
		unlink()
	}
	if f.onStop != nil {
		f.onStop()
	}
	f.wg.Done()
}
