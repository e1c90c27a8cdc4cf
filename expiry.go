package leadership

import "time"

// Where a follower decides that a leader is gone: once the leader's record
// has gone unrenewed for 90% of its TTL since the follower last saw the
// store without the current write, a tenth of the TTL before any candidate
// may take over, so that a vanished leader is followed by "" and then its
// successor. A read at 80% checks for a renewal the watch missed; it must
// answer before the expiry to count.

// expiresAt is when the follower stops naming the current holder unless it
// sees it renewed.
func (e *following) expiresAt() time.Duration {
	ttl := e.cur.rec.TTL()
	return e.freshAt + ttl - ttl/10
}

// checkAt is when a read checks a holder not seen renewed, in time to
// answer before expiresAt.
func (e *following) checkAt() time.Duration {
	ttl := e.cur.rec.TTL()
	return e.freshAt + ttl - ttl/5
}

// expireIfUnrenewed declares the holder gone once its lease ran out
// unrenewed: it has stepped down by now, whether or not the store answers.
func (e *following) expireIfUnrenewed(now time.Duration) {
	if e.held() && !e.expired && now >= e.expiresAt() {
		e.expired = true
		e.publish()
	}
}

// checkDue reports whether a read must now confirm that a lease that looks
// unrenewed really is (a watch may have missed the renewal).
func (e *following) checkDue(now time.Duration) bool {
	return e.held() && !e.expired && !e.checked && now >= e.checkAt()
}

// nextExpiryWake is when the next check or expiry of the holder is due.
func (e *following) nextExpiryWake() time.Duration {
	if !e.held() || e.expired {
		return never
	}
	at := e.expiresAt()
	if !e.checked {
		at = min(at, max(e.checkAt(), e.retryAt))
	}
	return at
}

// lateWriteOfExpired handles a new state of the term already declared gone
// (prev was current before it, and the store was last seen holding prev at
// before). It reports whether the follower keeps naming no one.
func (e *following) lateWriteOfExpired(prev snapshot, before time.Duration) bool {
	if !sameTerm(prev, e.cur) {
		return false
	}
	// A write of a term already declared gone is dated from the last time
	// the store was seen without it, never from its arrival: the watch may
	// deliver it late (buffered across a partition).
	e.freshAt = min(e.freshAt, before)
	if e.lateWrite {
		return false
	}
	// It may be one its holder sent before it stepped down, applied late by
	// the store (a paused server): it proves nothing. The holder is named
	// again only once a further write of the term shows it renewing, which
	// it does only while it leads.
	e.lateWrite = true
	return true
}

// sameTerm reports whether two snapshots show the same holder in the same
// term of the same election.
func sameTerm(a, b snapshot) bool {
	return a.kind == snapRecord && b.kind == snapRecord && !a.rec.Free() &&
		a.rec.ID == b.rec.ID && a.rec.Term == b.rec.Term && a.rec.Gen == b.rec.Gen
}
