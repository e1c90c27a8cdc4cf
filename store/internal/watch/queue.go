package watch

import "sync"

// Queue is an unbounded FIFO between producers that never block on it
// (they may hold their own locks) and one consumer goroutine that takes
// everything queued at once.
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
