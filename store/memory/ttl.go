package memory

import "time"

// expiredAt reports whether e's countdown has run out at now.
func (e *entry) expiredAt(now time.Time) bool {
	return e.timer != nil && !now.Before(e.deadline)
}

// keptAlive reports whether e's owner currently renews it.
func (b *backend) keptAlive(e *entry) bool {
	if e.owner == nil || !e.owner.reachable() {
		return false
	}

	return e.lock == nil || !e.lock.renewStopped
}

// syncTimer makes e's expiry countdown match its keep-alive state: no
// countdown while kept alive (a renewal), a full TTL countdown started when
// keep-alive stops, and an already running countdown left untouched.
func (b *backend) syncTimer(e *entry) {
	if e.ttl <= 0 || b.keptAlive(e) {
		b.stopTimer(e)

		return
	}

	if e.timer != nil {
		return
	}

	gen := e.timerGen
	e.deadline = time.Now().Add(e.ttl)
	e.timer = time.AfterFunc(e.ttl, func() { b.expire(e, gen) })
}

func (b *backend) stopTimer(e *entry) {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}

	e.timerGen++
}

// expire is the timer callback; it ignores stale timers.
func (b *backend) expire(e *entry, gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()

	if b.entries[e.key] != e || e.timerGen != gen {
		return
	}

	b.expireNow(e)
}

func (b *backend) expireNow(e *entry) {
	b.publish(b.remove(e))
}

// reachChanged applies the consequences of h's reachability going from was
// to its current value: keep-alive of its keys stops or resumes, and its
// paused watches catch up when it becomes reachable again.
func (b *backend) reachChanged(h *Store, was bool) {
	now := h.reachable()
	if was == now {
		return
	}

	t := time.Now()
	for e := range h.owned {
		if e.expiredAt(t) {
			b.expireNow(e)

			continue
		}

		b.syncTimer(e)
	}

	if now {
		b.resumeWatches(h)
	}
}
