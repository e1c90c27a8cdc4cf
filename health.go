package leadership

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Health, as client-go's HealthzAdaptor: is the engine still making
// progress? The plain checks are Candidate.Health and Follower.Health; the
// health package serves them over HTTP.

// pastDeadlineGrace is how long a leader may still hold its lease after
// its deadline before Health calls it stuck: the watchdog ends the lease at
// the deadline, so only a process starved of CPU gets there.
const pastDeadlineGrace = time.Second

// progress is when a store call last worked, on the owner's time axis.
type progress struct {
	lastOK atomic.Int64 // nanoseconds; 0 before the first
}

func (p *progress) worked(now time.Duration) { p.lastOK.Store(int64(max(now, 1))) }

// silentFor is how long no store call has worked, counted from start when
// none has yet: never negative, though a call that works while now is
// being read may note a later time than now.
func (p *progress) silentFor(now time.Duration) time.Duration {
	return max(now-time.Duration(p.lastOK.Load()), 0)
}

// check is the part of Health that candidates and followers share.
func (p *progress) check(life *lifecycle, now, maxSilence time.Duration) error {
	switch life.current() {
	case stateIdle:
		return fmt.Errorf("%w: not started", ErrUnhealthy)
	case stateStopped:
		if err := life.err(); err != nil {
			return fmt.Errorf("%w: stopped: %w", ErrUnhealthy, err)
		}
		return fmt.Errorf("%w: stopped", ErrUnhealthy)
	}
	if d := p.silentFor(now); d > maxSilence {
		return fmt.Errorf("%w: no store call has worked for %v (bound %v)", ErrUnhealthy, d.Round(time.Millisecond), maxSilence)
	}
	return nil
}

// Health returns nil while the candidate runs and makes progress, and an
// error matching ErrUnhealthy otherwise: it has not started or has
// stopped, no store call has worked for longer than maxSilence, or it
// still holds a lease more than a second past its deadline (its watchdog
// did not run: the process is starved). A candidate that is leading
// renews every TTL/3; one that waits reads at least every three poll
// intervals (TTL by default): choose maxSilence above those, such as two
// TTLs. Health is cheap and safe from any goroutine.
func (c *Candidate) Health(maxSilence time.Duration) error {
	now := c.clock.now()
	if l := c.leases.lease(); l != nil && now > l.deadlineAt()+pastDeadlineGrace {
		return fmt.Errorf("%w: term %d holds its lease %v past its deadline", ErrUnhealthy, l.term.Token, (now - l.deadlineAt()).Round(time.Millisecond))
	}
	return c.progress.check(c.life, now, maxSilence)
}

// Health returns nil while the follower runs and makes progress, and an
// error matching ErrUnhealthy otherwise: it has not started or has
// stopped, or no store call has worked for longer than maxSilence. A
// follower reads at least every three poll intervals (3s by default):
// choose maxSilence above that. Health is cheap and safe from any
// goroutine.
func (f *Follower) Health(maxSilence time.Duration) error {
	return f.progress.check(f.life, f.clock.now(), maxSilence)
}

func (c *Candidate) storeWorked() { c.progress.worked(c.clock.now()) }

func (f *Follower) storeWorked() { f.progress.worked(f.clock.now()) }

// Staleness is how long ago a store call of the follower last worked (a
// read of the key, at least every three poll intervals while the watch
// runs, or every poll interval without it): the age of the newest state
// the follower has confirmed. Watch events may have told it of changes
// since; they are hints and do not count. Before the first read it is the
// time since NewFollower. For metrics (see Metrics); safe from any
// goroutine.
func (f *Follower) Staleness() time.Duration { return f.progress.silentFor(f.clock.now()) }
