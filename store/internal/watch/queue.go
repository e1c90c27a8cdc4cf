package watch

import (
	"context"
	"sync"
)

// Queue is an unbounded FIFO between producers that never block on it
// (they may hold their own locks) and one consumer goroutine.
type Queue[T any] struct {
	mu     sync.Mutex
	items  []T
	signal chan struct{} // capacity 1: "items may be non-empty"
}

// NewQueue returns an empty queue.
func NewQueue[T any]() *Queue[T] {
	return &Queue[T]{signal: make(chan struct{}, 1)}
}

// Push appends v; it never blocks.
func (q *Queue[T]) Push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()

	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// Pop removes and returns the first item, if there is one.
func (q *Queue[T]) Pop() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()

	var zero T
	if len(q.items) == 0 {
		return zero, false
	}

	v := q.items[0]
	q.items[0] = zero
	q.items = q.items[1:]

	if len(q.items) == 0 {
		q.items = nil
	}

	return v, true
}

// Take removes and returns every queued item, waiting for at least one
// until done is closed (then it returns nil).
func (q *Queue[T]) Take(done <-chan struct{}) []T {
	for {
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()

		if len(items) > 0 {
			return items
		}

		select {
		case <-q.signal:
		case <-done:
			return nil
		}
	}
}

// Deliver forwards queued items to out, in order, until ctx or done ends.
//
// Deprecated: a goroutine per watch while idle; use Feed. Kept for the
// adapters of earlier releases, which build against this module.
func (q *Queue[T]) Deliver(ctx context.Context, done <-chan struct{}, out chan<- T) {
	for {
		v, ok := q.Pop()
		if !ok {
			select {
			case <-q.signal:
				continue
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}

		select {
		case out <- v:
		case <-ctx.Done():
			return
		case <-done:
			return
		}
	}
}
