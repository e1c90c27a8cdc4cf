package leadership

import "time"

// timeSource is the time source of a Candidate or a Follower: every lease
// deadline, renewal, expiry, poll and retry is timed on it, and the times
// it reports (Term.Began, Status.At) come from it. The default is the
// system clock, whose Now carries a monotonic reading, so that a jump of
// the wall clock moves no deadline. Tests give their own with withClock
// to drive timing without sleeping; programs that want the same run their
// tests in a testing/synctest bubble, where the system clock is fake.
// Clocks need not agree on the time, only on its rate: the safety promise
// holds while no participant's clock runs more than TTL/(TTL - margin)
// times as fast as a holder's (1.11 at the default margin of TTL/10;
// docs/semantics.md, section 1, states a bound of 1.1).
type timeSource interface {
	// Now returns the current time. Durations between two readings must
	// never be negative.
	Now() time.Time
	// NewTimer returns a timer that fires once, d after it was made.
	NewTimer(d time.Duration) oneShot
}

// oneShot is a timer made by a timeSource, with the semantics of
// time.Timer as of Go 1.23: Stop and Reset discard a value not yet
// received, so that a receive after them waits for the new deadline.
type oneShot interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// withClock times the candidate or follower on clk instead of the system
// clock. A nil clock is an error.
func withClock(clk timeSource) Option {
	return notNil("withClock", clk, func(c *config) { c.clock = clk })
}

// systemClock is the default Clock: time.Now and time.NewTimer.
type systemClock struct{}

func (systemClock) Now() time.Time                   { return time.Now() }
func (systemClock) NewTimer(d time.Duration) oneShot { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time        { return t.t.C }
func (t systemTimer) Stop() bool                 { return t.t.Stop() }
func (t systemTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

// elapsed measures time on a Clock from a starting reading: the engine's
// time axis, in which every deadline is a duration since the start.
type elapsed struct {
	clk   timeSource
	epoch time.Time
	wall  int64 // the start's wall reading, Unix nanoseconds: where the slots lie (slotStart)
}

func startElapsed(clk timeSource) elapsed {
	now := clk.Now()
	return elapsed{clk: clk, epoch: now, wall: now.UnixNano()}
}

// now is the time since the start.
func (e elapsed) now() time.Duration { return e.clk.Now().Sub(e.epoch) }

// slotsPerInterval is how many slots a renewal or poll interval has: a
// renewal or poll due at t is sent at the start of t's slot, up to
// interval/slotsPerInterval early, so that the calls of every election of
// a process that fall in one slot leave together, and an adapter that
// batches concurrent calls (PostgreSQL, Consul) sends them as one request
// (docs/scale.md). Slots are multiples of the slot length on the wall
// clock's scale, as it read when each candidate or follower started: the
// same for all of a process's (a wall clock set meanwhile only misplaces a
// later starter's slots), and the same in each run of a simulation.
const slotsPerInterval = 32

// slotStart returns the start of the slot of t (on e's axis) for a call
// repeated every interval: t itself when slots would be under a
// millisecond. Early is always safe: a lease runs from the send time, and
// a poll only reads sooner. Polls are slotted too, so that an adapter
// batches a slot's reads; a poll in the slot of its election's renewal
// may read the renewal before the watch delivers it, and the watch is
// doubted only if its event does not follow within watchGrace
// (observer.checkWatch): without that grace, slotted polls reopened
// watches and read 10 to 40% more.
func (e elapsed) slotStart(t, interval time.Duration) time.Duration {
	slot := interval / slotsPerInterval
	if slot < time.Millisecond || t <= 0 || t == never {
		return t
	}
	phase := (e.wall%int64(slot) + int64(t%slot)) % int64(slot)
	if phase < 0 {
		phase += int64(slot)
	}
	return t - time.Duration(phase)
}

// never is a time that does not come.
const never = time.Duration(1<<63 - 1)
