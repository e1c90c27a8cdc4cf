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
		case v := <-s.channel():
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
	for v := range s.channel() {
		got = append(got, v)
	}
	if len(got) != sinkBuffer || got[len(got)-1] != sinkBuffer {
		t.Fatalf("after close with no reader the channel holds %v, want the newest %d values ending with %d", got, sinkBuffer, sinkBuffer)
	}
}

// A stream no one asked for (a Status nobody reads) queues its values
// without a buffer or a goroutine; asked for later, even after the owner
// stopped, it gives what a late reader finds: the newest values, then the
// close.
func TestStreamMadeWhenFirstAskedFor(t *testing.T) {
	s := newQueueSink[int](100)
	b := newBoolSink()
	g := newSinkGroup(s, b)
	g.start()
	for i := range 3 * sinkBuffer {
		s.push(i)
		b.push(i%2 == 0)
	}
	s.mu.Lock()
	made, active := s.out != nil, s.active
	s.mu.Unlock()
	if made || active {
		t.Fatalf("a stream never asked for: channel made %v, goroutine %v", made, active)
	}
	g.close()
	var got []int
	for v := range s.channel() {
		got = append(got, v)
	}
	if len(got) != sinkBuffer || got[len(got)-1] != 3*sinkBuffer-1 {
		t.Fatalf("asked for after the close, the stream holds %v, want the newest %d values ending with %d", got, sinkBuffer, 3*sinkBuffer-1)
	}
	var last []bool
	for v := range b.channel() {
		last = append(last, v)
	}
	if len(last) == 0 || last[len(last)-1] {
		t.Fatalf("the elected stream asked for after the close holds %v, want it to end on false", last)
	}

	// Asked for while values flow, it starts with what queued meanwhile.
	s = newQueueSink[int](100)
	g = newSinkGroup(s)
	g.start()
	s.push(1)
	s.push(2)
	ch := s.channel()
	s.push(3)
	for want := 1; want <= 3; want++ {
		select {
		case v := <-ch:
			if v != want {
				t.Fatalf("got %d, want %d", v, want)
			}
		case <-time.After(wait):
			t.Fatalf("value %d never arrived", want)
		}
	}
	g.close()
}
