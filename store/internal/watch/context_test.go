package watch

import (
	"context"
	"testing"
	"time"
)

func TestSend(t *testing.T) {
	ch := make(chan int, 1)
	if !Send(context.Background(), ch, 1) || <-ch != 1 {
		t.Fatal("not delivered")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Send(ctx, make(chan int), 2) {
		t.Fatal("delivered on a done context with no reader")
	}
}

func TestJoined(t *testing.T) {
	also, end := context.WithCancel(context.Background())
	c, cancel := Joined(context.Background(), also)
	defer cancel()
	end()
	<-c.Done() // ends with also
	c2, cancel2 := Joined(context.Background(), context.Background())
	cancel2()
	<-c2.Done()
}

func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Fatal("Sleep on a live context: false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Minute) {
		t.Fatal("Sleep on a done context: true")
	}
}
