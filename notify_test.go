package leadership

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// deliveryGoroutines counts the goroutines that wait for a channel's
// reader.
func deliveryGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf), "leadership.(*pump[...]).deliver")
}

// An election whose channels are read holds no goroutine for them; one
// whose reader stopped reading holds one per full channel, which ends
// with the owner.
func TestChannelsHoldNoGoroutineWhileRead(t *testing.T) {
	c := newCluster(t)
	h := c.handle()
	cand := NewCandidate(h, "idle-channels", "a", 10*time.Second)
	elected, errs, err := cand.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	defer cand.Stop()
	fol := NewFollower(h, "idle-channels")
	leaders, ferrs, err := fol.FollowElection()
	if err != nil {
		t.Fatal(err)
	}
	defer fol.Stop()
	for _, ch := range []<-chan error{errs, ferrs} { // read, as the others
		go func() {
			for range ch {
			}
		}()
	}
	recvUntil(t, elected, "elected", func(v bool) bool { return v })
	recvUntil(t, leaders, "the follower names a", func(s string) bool { return s == "a" })
	if n := deliveryGoroutines(); n != 0 {
		t.Fatalf("%d delivery goroutines while every value was read, want 0", n)
	}

	// Nobody reads the follower's leader channel now: after its buffer
	// fills, one goroutine waits for the reader, and the engine goes on.
	for i := range leaderQueueLimit + sinkBuffer {
		fol.leaders.push(string(rune('b' + i%20)))
	}
	eventually(t, "a goroutine waits for the reader", func() bool { return deliveryGoroutines() == 1 })
	if !cand.IsLeader() {
		t.Fatal("the leader stepped down while a channel was unread")
	}
	fol.Stop()
	if n := deliveryGoroutines(); n != 0 {
		t.Fatalf("%d delivery goroutines after Stop, want 0", n)
	}
}

// A queue sink whose buffer is full keeps the value that found it full:
// a reader gets every value, in order, and after a close with no reader
// the newest is in the buffer (found by a review: it was lost).
func TestQueueSinkKeepsTheValueThatFoundItFull(t *testing.T) {
	s := newQueueSink[int](100)
	g := newSinkGroup(s)
	g.start()
	for i := range sinkBuffer + 3 {
		s.push(i)
	}
	for want := range sinkBuffer + 3 {
		select {
		case v := <-s.out:
			if v != want {
				t.Fatalf("got %d, want %d", v, want)
			}
		case <-time.After(wait):
			t.Fatalf("value %d never arrived", want)
		}
	}
	g.close()

	s = newQueueSink[int](100)
	g = newSinkGroup(s)
	g.start()
	for i := range sinkBuffer + 1 {
		s.push(i)
	}
	g.close()
	var got []int
	for v := range s.out {
		got = append(got, v)
	}
	if len(got) != sinkBuffer || got[len(got)-1] != sinkBuffer {
		t.Fatalf("after close with no reader the channel holds %v, want the newest %d values ending with %d", got, sinkBuffer, sinkBuffer)
	}
}
