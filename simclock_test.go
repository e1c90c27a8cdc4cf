package leadership

// The simulator's clocks and its scheduler.
//
// Clocks: every participant runs on a simClock of its own, a timeSource (see
// clock.go) at its own rate and offset on top of the bubble's virtual
// time: its reading is base + e*(1+ppm/1e6), e the virtual time since the
// clock was made. Its timers fire at the first virtual instant at which
// the reading reaches their deadline. A participant can be paused (as by
// SIGSTOP or a long GC pause): its timers do not fire and its store calls
// and watch events wait until it resumes; its reading runs on meanwhile,
// so that it jumps forward by the paused time at the resume, as a
// monotonic clock does after a process was stopped.
//
// Scheduler: the order of goroutines woken at one virtual instant is the
// Go scheduler's, so every point at which a participant touches the world
// (a store call and its reply after a fault's wait, a watch event handed
// to it, a timer of its clock firing) and every driver step is a turn:
// it waits until the scheduler, the only goroutine of the bubble that
// calls synctest.Wait, grants it. The scheduler grants one turn at a time,
// once everything else in the bubble is blocked, the lowest (participant,
// kind, sub, order) first. What a granted goroutine sets off runs until it
// blocks again before the next turn is granted, so that one seed replays
// the same events in the same order.
//
// Two turns that one participant may request at one instant must differ
// in (kind, sub, order): what is left, the request order, is the Go
// scheduler's, whenever the two come from goroutines woken at once. A
// store call's turns carry its operation and the participant's count of
// calls at the call; a timer's carry the reading it was due at and its
// birth among the clock's timers. A pause holds every timer due meanwhile
// until the resume, where the engine's loop timer and its lease's
// watchdog tied when every timer's turn was (participant, timer, 0), and
// the engine stepped before the watchdog ended the lease or after, as
// the Go scheduler had it (seeds 3 and 5 of TestSimulatorReplaysExactly
// parted there); now the one due first fires first, as it would have had
// the participant run.

import (
	"math"
	"math/bits"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The kinds of turn, in the order they are granted within one instant and
// one participant.
// A participant's calls go first, so that its engine, blocked on a call,
// has taken the reply and is waiting again before a timer or a watch
// event is handed to it: an engine that finds two of them ready at once
// picks one at random (Go's select).
const (
	turnDriver = iota // a driver step (participant 0)
	turnCall          // a store call reaches the store
	turnReply         // a store call's reply, after a fault's wait
	turnLate          // a write applied late, after its caller gave up
	turnTimer         // a timer of the participant's clock fires
	turnWatch         // a watch event is handed to the participant
)

// simSched grants turns one at a time (see the file comment).
type simSched struct {
	mu      sync.Mutex
	pending []*simTurn
	seq     uint64
	grants  uint64
	closed  bool          // the run is over: turns are granted at once
	wake    chan struct{} // a turn was requested
	done    chan struct{} // closed when the run is over
}

type simTurn struct {
	who, kind  int
	sub, order uint64
	seq        uint64
	granted    chan struct{}
}

func newSimSched() *simSched {
	return &simSched{wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// turn waits until the scheduler grants the caller its turn.
func (s *simSched) turn(who, kind int, sub, order uint64) {
	t := &simTurn{who: who, kind: kind, sub: sub, order: order, granted: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.seq++
	t.seq = s.seq
	s.pending = append(s.pending, t)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-t.granted
}

// loop grants turns until done is closed.
func (s *simSched) loop() {
	for {
		select {
		case <-s.wake:
		case <-s.done:
			return
		}
		for {
			synctest.Wait()
			s.mu.Lock()
			if len(s.pending) == 0 {
				s.mu.Unlock()
				break
			}
			i := 0
			for j, t := range s.pending {
				if t.before(s.pending[i]) {
					i = j
				}
			}
			t := s.pending[i]
			s.pending = slices.Delete(s.pending, i, i+1)
			s.grants++
			s.mu.Unlock()
			close(t.granted)
		}
	}
}

// finish ends the loop once the run is over: what is still pending is
// granted, and later turns are granted at once (timers of participants
// gone, firing into channels no one reads).
func (s *simSched) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, t := range s.pending {
		close(t.granted)
	}
	s.pending = nil
	close(s.done)
}

func (t *simTurn) before(u *simTurn) bool {
	switch {
	case t.who != u.who:
		return t.who < u.who
	case t.kind != u.kind:
		return t.kind < u.kind
	case t.sub != u.sub:
		return t.sub < u.sub
	case t.order != u.order:
		return t.order < u.order
	}
	return t.seq < u.seq
}

// simClock is one participant's clock (see the file comment).
type simClock struct {
	sched *simSched
	id    int       // the participant's place in the scheduler's order
	t0    time.Time // virtual time when it was made
	base  time.Time // its reading then
	ppm   int64     // rate: 1 + ppm/1e6 of virtual time

	mu      sync.Mutex
	paused  bool
	resumed chan struct{} // closed when a pause ends
	pauses  []simPause
	reads   map[time.Time]time.Time // its last readings: when each was taken
	order   []time.Time
	timers  uint64 // timers made so far: their birth orders their turns
}

// simFar is beyond the end of any run.
const simFar = 1000 * time.Hour

// simPause is a pause of a participant, in virtual time.
type simPause struct{ from, to time.Time } // to is zero while it lasts

func newSimClock(sched *simSched, id int, offset time.Duration, ppm int64) *simClock {
	now := time.Now()
	return &simClock{sched: sched, id: id, t0: now, base: now.Add(offset), ppm: ppm, reads: map[time.Time]time.Time{}}
}

// rate is the clock's rate as a factor of virtual time.
func (c *simClock) rate() float64 { return 1 + float64(c.ppm)/1e6 }

// scaled is the clock's advance over e of virtual time (e >= 0).
func (c *simClock) scaled(e time.Duration) time.Duration {
	return e + time.Duration(int64(e)*c.ppm/1e6)
}

// localAt is the clock's reading at virtual time v (v >= t0).
func (c *simClock) localAt(v time.Time) time.Time { return c.base.Add(c.scaled(v.Sub(c.t0))) }

// realOf is the first virtual time at which the clock reads l or more.
func (c *simClock) realOf(l time.Time) time.Time {
	d := l.Sub(c.base)
	if d <= 0 {
		return c.t0
	}
	hi, lo := bits.Mul64(uint64(d), 1e6)
	q, _ := bits.Div64(hi, lo, uint64(1e6+c.ppm))
	e := time.Duration(q)
	for c.scaled(e) < d {
		e++
	}
	for e > 0 && c.scaled(e-1) >= d {
		e--
	}
	return c.t0.Add(e)
}

// readAt is the virtual time at which the clock was read l (at a rate
// below 1, one reading lasts a few nanoseconds of virtual time: the
// reading remembers which).
func (c *simClock) readAt(l time.Time) time.Time {
	c.mu.Lock()
	v, ok := c.reads[l]
	c.mu.Unlock()
	if ok {
		return v
	}
	return c.realOf(l)
}

// simReadsKept is how many of its last readings a clock remembers.
const simReadsKept = 1 << 14

// Now is the clock's reading.
func (c *simClock) Now() time.Time {
	v := time.Now()
	l := c.localAt(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.reads[l]; !ok {
		c.reads[l] = v
		c.order = append(c.order, l)
		if len(c.order) > 2*simReadsKept {
			for _, old := range c.order[:simReadsKept] {
				delete(c.reads, old)
			}
			c.order = append(c.order[:0], c.order[simReadsKept:]...)
		}
	}
	return l
}

// NewTimer makes a timer that fires once the reading has advanced by d.
func (c *simClock) NewTimer(d time.Duration) oneShot {
	c.mu.Lock()
	c.timers++
	t := &simTimer{clk: c, c: make(chan time.Time, 1), birth: c.timers}
	c.mu.Unlock()
	t.mu.Lock()
	t.arm(d)
	t.mu.Unlock()
	return t
}

// pause stops the participant until resume.
func (c *simClock) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused, c.resumed = true, make(chan struct{})
	c.pauses = append(c.pauses, simPause{from: time.Now()})
}

func (c *simClock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		return
	}
	c.paused = false
	close(c.resumed)
	c.pauses[len(c.pauses)-1].to = time.Now()
}

func (c *simClock) isPaused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// step waits until the participant runs and the scheduler grants it a
// turn of the kind.
func (c *simClock) step(kind int, sub, order uint64) {
	for {
		c.mu.Lock()
		paused, resumed := c.paused, c.resumed
		c.mu.Unlock()
		if paused {
			<-resumed
		}
		c.sched.turn(c.id, kind, sub, order)
		if !c.isPaused() {
			return
		}
	}
}

// acting maps the virtual time t at which the participant did something
// to the last time it was running: a pause's start if t falls within a
// pause or at its resume (a timer due during the pause fires at the
// resume, which did not run meanwhile).
func (c *simClock) acting(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Back to back pauses (resumed and paused again at one instant, before
	// it ran) are one.
	for i := len(c.pauses) - 1; i >= 0; i-- {
		if p := c.pauses[i]; t.After(p.from) && (p.to.IsZero() || !t.After(p.to)) {
			t = p.from
		}
	}
	return t
}

// pausedIn is how long the participant was paused within [a, b].
func (c *simClock) pausedIn(a, b time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var d time.Duration
	for _, p := range c.pauses {
		to := p.to
		if to.IsZero() || to.After(b) {
			to = b
		}
		from := p.from
		if from.Before(a) {
			from = a
		}
		if to.After(from) {
			d += to.Sub(from)
		}
	}
	return d
}

// simTimer is a timer of a simClock, with the semantics of time.Timer as
// of Go 1.23 (Stop and Reset discard a value not received).
type simTimer struct {
	clk   *simClock
	c     chan time.Time
	birth uint64 // its place among the clock's timers

	mu    sync.Mutex
	t     *time.Timer
	gen   uint64
	armed bool
}

// arm sets the timer to fire d of the clock from now; t.mu is held.
func (t *simTimer) arm(d time.Duration) {
	t.gen++
	gen := t.gen
	t.armed = true
	wait := d // a timer beyond any run never fires: no need to scale it
	due := uint64(math.MaxUint64)
	if d < simFar {
		at := t.clk.Now().Add(d)
		wait = max(t.clk.realOf(at).Sub(time.Now()), 0)
		due = uint64(max(at.Sub(t.clk.base), 0))
	}
	t.t = time.AfterFunc(wait, func() { t.fire(gen, due) })
}

// fire is the timer's turn: due (the reading it was due at, from the
// clock's base) and its birth order it among the participant's timers
// that come due, or are held by a pause, at one instant.
func (t *simTimer) fire(gen, due uint64) {
	t.clk.step(turnTimer, due, t.birth)
	t.mu.Lock()
	defer t.mu.Unlock()
	if gen != t.gen || !t.armed {
		return
	}
	t.armed = false
	select {
	case t.c <- t.clk.Now():
	default:
	}
}

func (t *simTimer) C() <-chan time.Time { return t.c }

func (t *simTimer) Stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.armed = false
	t.gen++
	t.t.Stop()
	t.drain()
	return was
}

func (t *simTimer) Reset(d time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := t.armed
	t.t.Stop()
	t.drain()
	t.arm(d)
	return was
}

func (t *simTimer) drain() {
	select {
	case <-t.c:
	default:
	}
}

// A simClock's timers fire at the first virtual instant its reading
// reaches their deadline, at its rate; Stop and Reset discard a value not
// received; a pause holds a timer due meanwhile until the resume, when the
// reading has jumped forward by the pause.
func TestSimClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSimSched()
		go s.loop()
		defer s.finish()
		for _, ppm := range []int64{-simMaxPPM, -1, 0, 7, simMaxPPM} {
			c := newSimClock(s, 1, -time.Hour, ppm)
			start := c.Now()
			tm := c.NewTimer(time.Second)
			fired := <-tm.C()
			if got := fired.Sub(start); got < time.Second || got > time.Second+2 {
				t.Fatalf("ppm %d: fired %v of the clock after it was set, want 1s", ppm, got)
			}
			if c.realOf(c.Now()) != time.Now() && ppm >= 0 {
				t.Fatalf("ppm %d: realOf(Now) %v is not now %v", ppm, c.realOf(c.Now()), time.Now())
			}
			if got, want := time.Since(c.t0), time.Duration(float64(time.Second)/c.rate()); got < want-2 || got > want+2 {
				t.Fatalf("ppm %d: fired after %v of virtual time, want %v", ppm, got, want)
			}

			tm.Reset(time.Second)
			time.Sleep(2 * time.Second) // fired, not received
			if tm.Stop() {
				t.Fatalf("ppm %d: Stop of a fired timer reported it active", ppm)
			}
			select {
			case <-tm.C():
				t.Fatalf("ppm %d: a value after Stop", ppm)
			default:
			}

			tm.Reset(time.Second)
			c.pause()
			time.Sleep(3 * time.Second)
			select {
			case <-tm.C():
				t.Fatalf("ppm %d: fired during a pause", ppm)
			default:
			}
			before := c.Now()
			c.resume()
			<-tm.C()
			if c.Now() != before {
				t.Fatalf("ppm %d: the resume took time", ppm)
			}
			if got := c.acting(time.Now()); !got.Equal(c.pauses[0].from) {
				t.Fatalf("ppm %d: acting at the resume %v, want the pause's start %v", ppm, got, c.pauses[0].from)
			}
		}
	})
}
