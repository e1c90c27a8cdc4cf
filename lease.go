package leadership

import (
	"context"
	"sync/atomic"
	"time"
)

// endReason says why a term ended.
type endReason int32

const (
	endNone       endReason = iota
	endDeadline             // no renewal confirmed in time
	endLost                 // the record shows someone else
	endResigned             // Resign
	endRelinquish           // a relinquish interval or schedule came due
	endStopped              // Stop, or the run's context was cancelled
	endEnded                // the election was ended
)

// lease is the candidate's right to act as leader during one term. It is
// ended exactly once, by whoever gets there first: the watchdog at the
// deadline, Resign, or the engine. Ending it never waits on the store.
type lease struct {
	term     Term
	deadline atomic.Int64 // in the candidate's clock (nanoseconds since its epoch)
	extended chan struct{}
	cancel   context.CancelFunc
	reason   atomic.Int32
}

// startLease makes the candidate leader for term until deadline. It is
// called by the engine only, and returns nil, starting nothing, once parent
// has ended: a term never begins after Stop or a cancel.
func (c *Candidate) startLease(parent context.Context, t Term, deadline time.Duration) *lease {
	ctx, cancel := context.WithCancel(parent)
	t.ctx = ctx
	l := &lease{term: t, extended: make(chan struct{}, 1), cancel: cancel}
	l.deadline.Store(int64(deadline))
	c.leadMu.Lock()
	if parent.Err() != nil {
		c.leadMu.Unlock()
		cancel()
		return nil
	}
	c.lead.Store(l)
	c.elected.push(true)
	if q := c.terms.Load(); q != nil {
		q.push(termEvent{term: t, began: true})
	}
	c.leadMu.Unlock()
	c.wg.Go(func() { c.watchdog(l) })
	return l
}

// extend moves the lease's deadline later after a confirmed renewal. A
// lease whose deadline has passed stays over, even if its watchdog has not
// run yet.
func (l *lease) extend(now, deadline time.Duration) {
	if cur := l.deadline.Load(); int64(now) < cur && int64(deadline) > cur {
		l.deadline.Store(int64(deadline))
		poke(l.extended)
	}
}

// watchdog ends the lease at its deadline unless a renewal moved it. It runs
// on its own so that a store call that hangs cannot delay the step-down.
func (c *Candidate) watchdog(l *lease) {
	ctx := l.term.ctx
	t := time.NewTimer(time.Duration(l.deadline.Load()) - c.clock())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.extended:
		case <-t.C:
		}
		left := time.Duration(l.deadline.Load()) - c.clock()
		if left <= 0 {
			c.stepDown(l, endDeadline)
			return
		}
		t.Reset(left)
	}
}

// stepDown ends the lease if it is still the current one, and reports
// whether this call ended it. It never blocks on a consumer or the store.
func (c *Candidate) stepDown(l *lease, why endReason) bool {
	// The reason is claimed before the lease is cleared, so that the engine,
	// which looks at the reason once it sees the lease gone, never finds it
	// unset.
	if l == nil || !l.reason.CompareAndSwap(int32(endNone), int32(why)) {
		return false
	}
	c.leadMu.Lock()
	c.lead.CompareAndSwap(l, nil)
	l.cancel()
	c.elected.push(false)
	if q := c.terms.Load(); q != nil {
		q.push(termEvent{term: l.term})
	}
	c.leadMu.Unlock()
	c.logger().Debug("leadership: stepped down", "key", c.key, "node", c.node, "term", l.term.Token, "reason", why.String())
	poke(c.wake)
	return true
}

func (r endReason) String() string {
	switch r {
	case endDeadline:
		return "deadline"
	case endLost:
		return "lost"
	case endResigned:
		return "resigned"
	case endRelinquish:
		return "relinquished"
	case endStopped:
		return "stopped"
	case endEnded:
		return "ended"
	}
	return "none"
}

// termEvent tells Run's callbacks that a term began or ended.
type termEvent struct {
	term  Term
	began bool
}
