package leadership

import "sync"

// The engine never waits for a consumer: it hands every event to a sink,
// which queues it without blocking, and a small goroutine per channel
// delivers the queue. When the owner stops, what is still queued is moved
// into the channel's buffer, newest kept, and the channel is closed: a late
// reader still finds the last events (such as ErrElectionEnded) before it
// sees the close, and no goroutine outlives the owner.

// boolSink delivers a strictly alternating stream false, true, false, ...
// Because the values alternate, a count of undelivered transitions is the
// whole queue: a reader that falls behind still sees every transition, in
// order, and memory stays constant however far behind it is.
type boolSink struct {
	mu        sync.Mutex
	delivered bool // last value handed to the channel
	pending   int  // transitions not yet handed over
	wake      chan struct{}
	out       chan bool
}

func newBoolSink() *boolSink {
	// delivered=true with one pending transition makes false the first value.
	return &boolSink{delivered: true, pending: 1, wake: make(chan struct{}, 1), out: make(chan bool, 1)}
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

// next returns the next transition to hand over, if any.
func (s *boolSink) next() (bool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.delivered, s.pending > 0
}

// handed records that the next transition reached the channel.
func (s *boolSink) handed() {
	s.mu.Lock()
	s.delivered, s.pending = !s.delivered, s.pending-1
	s.mu.Unlock()
}

func (s *boolSink) run(stop <-chan struct{}) {
	deliver(stop, s.wake, s.out, s.next, func(bool) { s.handed() }, func(*bool) { s.closeOut() })
}

// closeOut closes the channel so that the last value a reader sees is
// false: the owner has stopped and leads no more. Pending transitions come
// in pairs after the last value handed over and are dropped. If that value
// is true, false follows it; if the true is still in the buffer and there is
// no room, it is taken back instead, so the reader's last value stays the
// false before it and no value repeats.
func (s *boolSink) closeOut() {
	s.mu.Lock()
	last := s.delivered
	s.pending = 0
	s.mu.Unlock()
	if last {
		select {
		case s.out <- false:
		default:
			select {
			case <-s.out: // the buffered true, taken back
			default:
				// The reader took the true meanwhile: there is room now.
				select {
				case s.out <- false:
				default:
				}
			}
		}
	}
	close(s.out)
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

// sinkBuffer is the buffer of every queue sink's channel: what a late
// reader finds after the owner stopped.
const sinkBuffer = 8

func newQueueSink[T any](limit int) *queueSink[T] {
	return &queueSink[T]{limit: limit, wake: make(chan struct{}, 1), out: make(chan T, sinkBuffer)}
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

func (s *queueSink[T]) run(stop <-chan struct{}) {
	deliver(stop, s.wake, s.out, s.pop, func(T) {}, func(unsent *T) {
		if unsent != nil {
			s.keep(*unsent)
		}
		s.closeOut()
	})
}

// keep puts v into the buffer, dropping the oldest buffered value if full.
func (s *queueSink[T]) keep(v T) {
	for {
		select {
		case s.out <- v:
			return
		default:
		}
		select {
		case <-s.out:
		default:
		}
	}
}

// closeOut moves the rest of the queue into the buffer, newest kept, and
// closes the channel.
func (s *queueSink[T]) closeOut() {
	for v, ok := s.pop(); ok; v, ok = s.pop() {
		s.keep(v)
	}
	close(s.out)
}

// deliver is the delivery loop of a sink: it hands each value next yields
// to out, calling handed once out took it, and waits on wake when there is
// none. When stop closes it calls stopped with the value it was trying to
// hand over (nil if none) and returns.
func deliver[T any](stop, wake <-chan struct{}, out chan<- T, next func() (T, bool), handed func(T), stopped func(unsent *T)) {
	for {
		v, ok := next()
		if !ok {
			select {
			case <-wake:
				continue
			case <-stop:
				stopped(nil)
				return
			}
		}
		select {
		case out <- v:
			handed(v)
		case <-stop:
			stopped(&v)
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

// sink is a channel with its delivery loop: run delivers until stop, then
// closes the channel; closeOut closes a channel whose loop never ran.
type sink interface {
	run(stop <-chan struct{})
	closeOut()
}

// sinkGroup runs the delivery goroutines of one Candidate or Follower and
// ends them together.
type sinkGroup struct {
	sinks   []sink
	started bool
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

func newSinkGroup(sinks ...sink) *sinkGroup {
	return &sinkGroup{sinks: sinks, stop: make(chan struct{})}
}

// start runs every sink's delivery loop.
func (g *sinkGroup) start() {
	g.started = true
	for _, s := range g.sinks {
		g.wg.Go(func() { s.run(g.stop) })
	}
}

// close stops every delivery loop, closing the channels, and waits.
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
