package leadership

// Where a leader steps down: at its own deadline when no renewal confirmed
// its lease in time (the watchdog), or when told to (Resign, a loss seen in
// the record, a relinquish time, Stop, the end of the election).

// endNone is the reason of a lease that has not ended; the others are the
// exported Reasons (errors.go).
const endNone Reason = 0

// watchdog ends the lease at its deadline unless a renewal moved it. It runs
// on its own so that a store call that hangs cannot delay the step-down.
func (k *leaseKeeper) watchdog(l *lease) {
	ctx := l.term.ctx
	t := k.clock.clk.NewTimer(l.deadlineAt() - k.clock.now())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.extended:
		case <-t.C():
		}
		left := l.deadlineAt() - k.clock.now()
		if left <= 0 {
			k.stepDown(l, ErrLeaseExpired)
			return
		}
		t.Reset(left)
	}
}

// stepDown ends the lease if it is still the current one, and reports
// whether this call ended it. It never blocks on a consumer or the store.
func (k *leaseKeeper) stepDown(l *lease, why Reason) bool {
	// The reason is claimed before the lease is cleared, so that the engine,
	// which looks at the reason once it sees the lease gone, never finds it
	// unset.
	if l == nil || !l.reason.CompareAndSwap(int32(endNone), int32(why)) {
		return false
	}
	k.mu.Lock()
	k.current.CompareAndSwap(l, nil)
	l.cancel(why)
	k.out.termEnded(l.term, why)
	k.mu.Unlock()
	k.log.Info("leadership: stepped down", "term", l.term.Token, "reason", why.String())
	poke(k.wake)
	return true
}

// stepDownNow ends the current lease, if any.
func (k *leaseKeeper) stepDownNow(why Reason) { k.stepDown(k.current.Load(), why) }
