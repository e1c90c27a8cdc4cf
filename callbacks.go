package leadership

import (
	"context"
	"sync"
)

// Callbacks are the hooks of Run. Any of them may be nil.
type Callbacks struct {
	// OnStartedLeading runs in its own goroutine when a term begins. ctx is
	// cancelled the moment the term ends (lost, deadline passed, Resign,
	// Stop, end of the election); the leader's work should run under it and
	// return when it is done.
	OnStartedLeading func(ctx context.Context, term Term)
	// OnStoppedLeading is called when a term ends, with the Reason it
	// ended (the cause of the term's context, as Metrics.TermEnded gets
	// it), without waiting for OnStartedLeading to return.
	OnStoppedLeading func(term Term, why Reason)
	// OnNewLeader is called with the leader's name whenever the candidate
	// sees it change, "" when there is none.
	OnNewLeader func(leader string)
	// OnError is called with every store error; the candidate keeps trying.
	OnError func(err error)
}

// Run campaigns under ctx and drives the callbacks until ctx is cancelled,
// Stop is called, or the election ends. It returns after the leader's work
// (OnStartedLeading) has returned: nil after a cancel or Stop,
// ErrElectionEnded when the election was ended, or why it could not start.
// Run consumes the candidate's channels: do not read them as well.
func (c *Candidate) Run(ctx context.Context, cb Callbacks) error {
	q := newQueueSink[termEvent](1 << 16)
	if err := c.start(ctx, q); err != nil {
		return err
	}
	var work sync.WaitGroup
	drainTerms := func() {
		for ev, ok := q.pop(); ok; ev, ok = q.pop() {
			switch {
			case ev.began && cb.OnStartedLeading != nil:
				work.Go(func() { cb.OnStartedLeading(ev.term.Context(), ev.term) })
			case !ev.began && cb.OnStoppedLeading != nil:
				cb.OnStoppedLeading(ev.term, ev.why)
			}
		}
	}
	status, errs, leader := c.statuses.channel(), c.errs.channel(), ""
	for {
		// Term events waiting go first: after a slow callback a status
		// or an error may be waiting beside them, and Go's select would
		// pick one at random; the engine reports a term before the
		// status that shows it.
		select {
		case <-q.wake:
			drainTerms()
		default:
		}
		select {
		case <-q.wake:
			drainTerms()
		case s, ok := <-status:
			if !ok {
				status = nil
				continue
			}
			if s.Role != RoleStopped && s.Leader != leader {
				leader = s.Leader
				if cb.OnNewLeader != nil {
					cb.OnNewLeader(leader)
				}
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if cb.OnError != nil {
				cb.OnError(err)
			}
		case <-c.life.done:
			// The channels are closed by now; what they still buffer (the
			// last error, such as ErrElectionEnded) is handed over first.
			if errs != nil {
				for err := range errs {
					if cb.OnError != nil {
						cb.OnError(err)
					}
				}
			}
			drainTerms()
			work.Wait()
			return c.life.err()
		}
	}
}

// termEvent tells Run's callbacks that a term began or ended, and why it
// ended.
type termEvent struct {
	term  Term
	began bool
	why   Reason
}
