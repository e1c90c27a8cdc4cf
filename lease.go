package leadership

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// lease is the candidate's right to act as leader during one term. It is
// ended exactly once, by whoever gets there first: the watchdog at the
// deadline, Resign, or the engine (stepdown.go). Ending it never waits on
// the store.
type lease struct {
	term     Term
	deadline atomic.Int64 // on the candidate's time axis (nanoseconds since its start)
	extended chan struct{}
	cancel   context.CancelCauseFunc // with the Reason it ended
	reason   atomic.Int32            // a Reason, set once when the lease ends
}

// deadlineAt is when the lease ends unless a renewal extends it.
func (l *lease) deadlineAt() time.Duration { return time.Duration(l.deadline.Load()) }

// endedBy is why the lease ended, endNone while it lasts.
func (l *lease) endedBy() Reason { return Reason(l.reason.Load()) }

// extend moves the lease's deadline later after a confirmed renewal. A
// lease whose deadline has passed stays over, even if its watchdog has not
// run yet.
func (l *lease) extend(now, deadline time.Duration) {
	if cur := l.deadline.Load(); int64(now) < cur && int64(deadline) > cur {
		l.deadline.Store(int64(deadline))
		poke(l.extended)
	}
}

// leaseReports is how the lease keeper tells the candidate that a term
// began or ended. The calls are made in order and must not block.
// termBeginning comes just before the term is visible (IsLeader,
// CurrentTerm), termBegan just after.
type leaseReports interface {
	termBeginning(t Term)
	termBegan(t Term)
	termEnded(t Term, why Reason)
}

// leaseKeeper holds a candidate's current lease, if any. The engine starts
// a lease when it wins a term and extends it on every confirmed renewal; the
// keeper ends it at its deadline (its watchdog), and whoever steps down
// (Resign, the engine on a loss, Stop) ends it through the keeper, which
// reports every start and end and wakes the engine.
type leaseKeeper struct {
	clock elapsed
	out   leaseReports
	log   *slog.Logger

	mu        sync.Mutex            // orders starts and ends on out
	current   atomic.Pointer[lease] // nil when not leader
	wake      chan struct{}         // poked when a lease ends or a value is proclaimed: wakes the engine
	watchdogs sync.WaitGroup
}

func newLeaseKeeper(clock elapsed, out leaseReports, log *slog.Logger) *leaseKeeper {
	return &leaseKeeper{clock: clock, out: out, log: log, wake: make(chan struct{}, 1)}
}

// start makes the candidate leader for term until deadline. It is called by
// the engine only, and returns nil, starting nothing, once parent has
// ended: a term never begins after Stop or a cancel.
func (k *leaseKeeper) start(parent context.Context, t Term, deadline time.Duration) *lease {
	ctx, cancel := context.WithCancelCause(parent)
	t.ctx = ctx
	l := &lease{term: t, extended: make(chan struct{}, 1), cancel: cancel}
	l.deadline.Store(int64(deadline))
	k.mu.Lock()
	if parent.Err() != nil {
		k.mu.Unlock()
		cancel(ErrStopped)
		return nil
	}
	k.out.termBeginning(t)
	k.current.Store(l)
	k.out.termBegan(t)
	k.mu.Unlock()
	k.log.Info("leadership: elected", "term", t.Token)
	k.watchdogs.Go(func() { k.watchdog(l) })
	return l
}

// lease returns the current lease, nil when not leader.
func (k *leaseKeeper) lease() *lease { return k.current.Load() }

// holds reports whether l is still the current lease.
func (k *leaseKeeper) holds(l *lease) bool { return k.current.Load() == l }

// valid returns the current lease if its deadline has not passed: the
// candidate may act as leader now.
func (k *leaseKeeper) valid() *lease {
	l := k.current.Load()
	if l == nil || k.clock.now() >= l.deadlineAt() {
		return nil
	}
	return l
}

// wait returns once every watchdog has ended (after the run's context did).
func (k *leaseKeeper) wait() { k.watchdogs.Wait() }
