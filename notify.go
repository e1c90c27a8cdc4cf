package leadership

import "sync"

// The engine never waits for a consumer: it hands every event to a sink,
// which queues it without blocking. A sink puts what it queues straight
// into its channel's buffer while there is room; only when the buffer is
// full does a goroutine start, to wait for the reader, and it ends as soon
// as the queue is empty again: an idle election holds no goroutine for its
// channels (docs/scale.md). When the owner stops, what is still queued is
// moved into the channel's buffer, newest kept, and the channel is closed:
// a late reader still finds the last events (such as ErrElectionEnded)
// before it sees the close, and no goroutine outlives the owner.

// pump moves a sink's queue into its channel: from push, at once, while
// the channel has room, and otherwise from a goroutine of the sink's group
// that lives while values wait. The channel is made when its owner first
// asks for it (channel): until then values only queue, and a stream no one
// asked for (a Status nobody reads) holds neither a buffer nor, once it
// would have filled, a goroutine. Every field is guarded by mu, but out
// once made does not change; next and handed are called with mu held,
// closeOut without.
type pump[T any] struct {
	mu       sync.Mutex
	out      chan T           // nil until channel is first called
	size     int              // out's buffer
	shutLate bool             // the group closed before out was made: channel closes it
	next     func() (T, bool) // the value to hand over next, if any
	handed   func(T)          // next's value reached the channel
	closeOut func(unsent *T)  // moves the rest into the buffer and closes out
	group    *sinkGroup       // set when the sink joins its group
	started  bool             // the group started: values may flow
	active   bool             // a delivery goroutine runs
	closing  bool             // the group is closing: no new goroutine
}

// flushLocked hands values to the channel while it has room, and starts
// the delivery goroutine when it is full. Called with mu held.
func (p *pump[T]) flushLocked() {
	if !p.started || p.active || p.closing || p.out == nil {
		return
	}
	for {
		v, ok := p.next()
		if !ok {
			return
		}
		select {
		case p.out <- v:
			p.handed(v)
		default:
			// v may be out of the queue already (a queue sink's next
			// pops): the goroutine hands it over first.
			p.active = true
			p.group.wg.Go(func() { p.deliver(v) })
			return
		}
	}
}

// deliver hands v to the reader, then the rest of the queue, until the
// queue is empty or the group closes; it closes the channel itself if the
// group closed while it ran.
func (p *pump[T]) deliver(v T) {
	for {
		select {
		case p.out <- v:
		case <-p.group.stop:
			p.closeOut(&v)
			return
		}
		p.mu.Lock()
		p.handed(v)
		next, ok := p.next()
		if !ok {
			p.active = false
			closing := p.closing
			p.mu.Unlock()
			if closing { // shut left the channel to this goroutine
				p.closeOut(nil)
			}
			return
		}
		p.mu.Unlock()
		v = next
	}
}

// begin lets values flow, once the group starts.
func (p *pump[T]) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started = true
	p.flushLocked()
}

// channel returns the sink's channel, made at the first call: what was
// queued meanwhile flows into it, and if the group has closed already it
// holds what a late reader finds and is closed.
func (p *pump[T]) channel() chan T {
	p.mu.Lock()
	if p.out != nil {
		defer p.mu.Unlock()
		return p.out
	}
	p.out = make(chan T, p.size)
	out, late := p.out, p.shutLate
	if !late {
		p.flushLocked()
	}
	p.mu.Unlock()
	if late {
		p.closeOut(nil)
	}
	return out
}

// shut closes the channel, or leaves that to the delivery goroutine if one
// runs (it sees the group's stop), or to channel if none was made yet.
func (p *pump[T]) shut() {
	p.mu.Lock()
	p.closing = true
	running, made := p.active, p.out != nil
	p.shutLate = !made
	p.mu.Unlock()
	if !running && made {
		p.closeOut(nil)
	}
}

func (p *pump[T]) join(g *sinkGroup) { p.group = g }

// boolSink delivers a strictly alternating stream false, true, false, ...
// Because the values alternate, a count of undelivered transitions is the
// whole queue: a reader that falls behind still sees every transition, in
// order, and memory stays constant however far behind it is.
type boolSink struct {
	pump[bool]
	delivered bool // last value handed to the channel
	pending   int  // transitions not yet handed over
}

func newBoolSink() *boolSink {
	// delivered=true with one pending transition makes false the first value.
	s := &boolSink{delivered: true, pending: 1}
	s.pump = pump[bool]{size: 1, next: s.nextLocked, handed: s.handedLocked, closeOut: s.closeRest}
	return s
}

// push records that the state is now v; a repeat of the latest state is not
// a transition and is ignored.
func (s *boolSink) push(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	latest := s.delivered != (s.pending%2 == 1)
	if v != latest {
		s.pending++
	}
	s.flushLocked()
}

// nextLocked returns the next transition to hand over, if any.
func (s *boolSink) nextLocked() (bool, bool) { return !s.delivered, s.pending > 0 }

// handedLocked records that the next transition reached the channel.
func (s *boolSink) handedLocked(bool) { s.delivered, s.pending = !s.delivered, s.pending-1 }

// closeRest closes the channel so that the last value a reader sees is
// false: the owner has stopped and leads no more. Pending transitions come
// in pairs after the last value handed over and are dropped (the unsent
// one among them). If that value is true, false follows it; if the true is
// still in the buffer and there is no room, it is taken back instead, so
// the reader's last value stays the false before it and no value repeats.
func (s *boolSink) closeRest(*bool) {
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
// ones, dropping the oldest beyond that. Outside a group (Candidate.Run's
// term events) it is a plain queue: pop takes from it, and wake is poked
// at every push.
type queueSink[T any] struct {
	pump[T]
	queue []T
	limit int
	wake  chan struct{}
}

// sinkBuffer is the buffer of every queue sink's channel: what a late
// reader finds after the owner stopped.
const sinkBuffer = 8

func newQueueSink[T any](limit int) *queueSink[T] {
	s := &queueSink[T]{limit: limit, wake: make(chan struct{}, 1)}
	s.pump = pump[T]{size: sinkBuffer, next: s.popLocked, handed: func(T) {}, closeOut: s.closeRest}
	return s
}

func (s *queueSink[T]) push(v T) {
	s.mu.Lock()
	if len(s.queue) >= s.limit {
		var zero T
		s.queue[0] = zero
		s.queue = s.queue[1:]
	}
	s.queue = append(s.queue, v)
	s.flushLocked()
	s.mu.Unlock()
	poke(s.wake)
}

// pop takes the oldest value, if any.
func (s *queueSink[T]) pop() (v T, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.popLocked()
}

func (s *queueSink[T]) popLocked() (v T, ok bool) {
	if len(s.queue) == 0 {
		return v, false
	}
	v = s.queue[0]
	var zero T
	s.queue[0] = zero
	s.queue = s.queue[1:]
	return v, true
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

// closeRest moves the value the delivery goroutine could not hand over,
// then the rest of the queue, into the buffer, newest kept, and closes the
// channel.
func (s *queueSink[T]) closeRest(unsent *T) {
	if unsent != nil {
		s.keep(*unsent)
	}
	for v, ok := s.pop(); ok; v, ok = s.pop() {
		s.keep(v)
	}
	close(s.out)
}

// poke wakes a goroutine waiting on a one-slot channel without blocking.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// sink is a channel with its pump.
type sink interface {
	join(g *sinkGroup)
	begin()
	shut()
}

// sinkGroup holds the channels of one Candidate or Follower, runs their
// delivery goroutines while values wait, and closes them together.
type sinkGroup struct {
	sinks []sink
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

func newSinkGroup(sinks ...sink) *sinkGroup {
	g := &sinkGroup{sinks: sinks, stop: make(chan struct{})}
	for _, s := range sinks {
		s.join(g)
	}
	return g
}

// start lets values flow into every channel.
func (g *sinkGroup) start() {
	for _, s := range g.sinks {
		s.begin()
	}
}

// close closes every channel, once what each holds is in its buffer, and
// waits for the delivery goroutines.
func (g *sinkGroup) close() {
	g.once.Do(func() {
		close(g.stop)
		for _, s := range g.sinks {
			s.shut()
		}
	})
	g.wg.Wait()
}
