package watch

import "testing"

func TestQueueKeepsOrder(t *testing.T) {
	q := NewQueue[int]()
	for i := range 3 {
		q.Push(i)
	}
	if got := q.Take(nil); len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("Take = %v", got)
	}
	done := make(chan struct{})
	close(done)
	if got := q.Take(done); got != nil {
		t.Fatalf("Take after done = %v", got)
	}
}
