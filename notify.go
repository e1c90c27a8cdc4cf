package leadership

import (
	"sync"
	"time"
)

// The engine never waits for a consumer: it hands every event to a sink,
// which queues it without blocking, and a small goroutine per channel
// delivers the queue. Stop closes the channels after the engine has ended,
// dropping what no one read.

// boolSink delivers a strictly alternating stream false, true, false, ...
// Because the values alternate, a count of undelivered transitions is the
// whole queue: a reader that falls behind still sees every transition, in
// order, and memory stays constant however far behind it is.
type boolSink struct {
	mu        sync.Mutex
	delivered bool // last value handed to the reader
	pending   int  // transitions not yet handed over
	wake      chan struct{}
	out       chan bool
}

func newBoolSink() *boolSink {
	// delivered=true with one pending transition makes false the first value.
	return &boolSink{delivered: true, pending: 1, wake: make(chan struct{}, 1), out: make(chan bool)}
}

// push records that the state is now v; a repeat of the latest state is not
// a transition and is ignored.
func (s *boolSink) push(v bool) {
	s.mu.Lock()
	latest := s.delivered != (s.pending%2 == 1)
	if v != latest {
		s.pending++
	}
	s.mu.Unlock()
	poke(s.wake)
}

func (s *boolSink) closeOut() { close(s.out) }

func (s *boolSink) run(stop, flush <-chan struct{}) {
	defer close(s.out)
	for {
		s.mu.Lock()
		n, next := s.pending, !s.delivered
		s.mu.Unlock()
		if n == 0 {
			select {
			case <-s.wake:
				continue
			case <-flush:
				return
			case <-stop:
				return
			}
		}
		select {
		case s.out <- next:
			s.mu.Lock()
			s.delivered, s.pending = next, s.pending-1
			s.mu.Unlock()
		case <-stop:
			return
		}
	}
}

// queueSink delivers values in order and keeps at most limit undelivered
// ones, dropping the oldest beyond that.
type queueSink[T any] struct {
	mu    sync.Mutex
	queue []T
	limit int
	wake  chan struct{}
	out   chan T
}

func newQueueSink[T any](limit int) *queueSink[T] {
	return &queueSink[T]{limit: limit, wake: make(chan struct{}, 1), out: make(chan T)}
}

func (s *queueSink[T]) push(v T) {
	s.mu.Lock()
	if len(s.queue) >= s.limit {
		var zero T
		s.queue[0] = zero
		s.queue = s.queue[1:]
	}
	s.queue = append(s.queue, v)
	s.mu.Unlock()
	poke(s.wake)
}

// pop takes the oldest value, if any.
func (s *queueSink[T]) pop() (v T, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return v, false
	}
	v = s.queue[0]
	var zero T
	s.queue[0] = zero
	s.queue = s.queue[1:]
	return v, true
}

// unpop puts back a value that could not be delivered.
func (s *queueSink[T]) unpop(v T) {
	s.mu.Lock()
	s.queue = append([]T{v}, s.queue...)
	s.mu.Unlock()
}

func (s *queueSink[T]) closeOut() { close(s.out) }

func (s *queueSink[T]) run(stop, flush <-chan struct{}) {
	defer close(s.out)
	for {
		v, ok := s.pop()
		if !ok {
			select {
			case <-s.wake:
				continue
			case <-flush:
				return
			case <-stop:
				return
			}
		}
		select {
		case s.out <- v:
		case <-stop:
			s.unpop(v)
			return
		}
	}
}

// poke wakes a goroutine waiting on a one-slot channel without blocking.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// sink is a channel with its delivery loop: run delivers until stop, or
// until flush once nothing is left to deliver, then closes the channel.
type sink interface {
	run(stop, flush <-chan struct{})
	closeOut()
}

// sinkGroup runs the delivery goroutines of one Candidate or Follower and
// ends them together.
type sinkGroup struct {
	sinks   []sink
	started bool
	stop    chan struct{}
	flushCh chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

func newSinkGroup(sinks ...sink) *sinkGroup {
	return &sinkGroup{sinks: sinks, stop: make(chan struct{}), flushCh: make(chan struct{})}
}

// start runs every sink's delivery loop.
func (g *sinkGroup) start() {
	g.started = true
	for _, s := range g.sinks {
		g.wg.Go(func() { s.run(g.stop, g.flushCh) })
	}
}

// flush lets the deliverers hand over what they hold for up to grace, then
// stops them.
func (g *sinkGroup) flush(grace time.Duration) {
	if !g.started {
		return
	}
	close(g.flushCh)
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		g.close()
		<-done
	}
}

// close stops every delivery loop, closing the channels, and waits. The
// channels of a group that never started are closed directly.
func (g *sinkGroup) close() {
	g.once.Do(func() {
		close(g.stop)
		if !g.started {
			for _, s := range g.sinks {
				s.closeOut()
			}
		}
	})
	g.wg.Wait()
}
