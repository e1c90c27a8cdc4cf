package postgres

import "sync"

// queue is an unbounded FIFO between the listener (which never blocks on
// it) and one watch goroutine.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	signal chan struct{} // capacity 1: "items may be non-empty"
}

func newQueue[T any]() *queue[T] {
	return &queue[T]{signal: make(chan struct{}, 1)}
}

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()

	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take removes and returns every queued item, waiting for at least one
// until done is closed (then it returns nil).
func (q *queue[T]) take(done <-chan struct{}) []T {
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
