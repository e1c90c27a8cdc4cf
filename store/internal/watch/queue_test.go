package watch

import (
	"context"
	"testing"
	"time"
)

func TestQueueKeepsOrder(t *testing.T) {
	q := NewQueue[int]()
	for i := range 3 {
		q.Push(i)
	}
	if v, ok := q.Pop(); !ok || v != 0 {
		t.Fatalf("Pop = %d, %v", v, ok)
	}
	if got := q.Take(nil); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("Take = %v", got)
	}
	if _, ok := q.Pop(); ok {
		t.Fatal("Pop on an empty queue")
	}
	done := make(chan struct{})
	close(done)
	if got := q.Take(done); got != nil {
		t.Fatalf("Take after done = %v", got)
	}
}

func TestDeliver(t *testing.T) {
	q := NewQueue[int]()
	out := make(chan int)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		q.Deliver(ctx, nil, out)
	}()
	q.Push(1)
	q.Push(2)
	for want := 1; want <= 2; want++ {
		select {
		case v := <-out:
			if v != want {
				t.Fatalf("got %d, want %d", v, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d not delivered", want)
		}
	}
	cancel()
	<-ended
}
