package leadership

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// campaign is the engine of one candidacy: a single goroutine that reads
// and writes the election record. Every write is a compare-and-swap against
// the last state it knows, so two candidates can never both believe a write
// made them leader; acting as leader is further bounded by the lease, which
// ends at its own deadline whatever this goroutine is doing.
type campaign struct {
	observer
	node    string
	ttl     time.Duration
	leases  *leaseKeeper
	values  *proclamation // the value written beside the name
	handoff *successorBox // the successor to name in the next release
	out     campaignReports
	id      string
	hold    *holding // the term this candidate holds in the record, nil if none

	uncertain    bool          // an acquire may have landed without us knowing
	holdoffUntil time.Duration // after resigning, leave a free record to others until then
	conflicts    int           // compare-and-swaps failed in a row with no new state seen
	acquireFails int           // acquires failed in a row with a store error
	lostLive     bool          // this candidate led when it last saw the store go back
	startAt      time.Duration // when the first read of the election was sent
	confirmed    *store.KVPair // our last write the store confirmed, as stored
}

// holding is a term this candidate wrote into the record.
type holding struct {
	rec          record
	pair         *store.KVPair // the record as stored, for the next compare-and-swap
	lease        *lease
	renewDue     time.Duration
	unconfirmed  time.Duration // send time of the earliest write not yet confirmed, or -1
	relinquishAt time.Duration // or never
	successor    string        // named in the release, after HandOff
}

// campaignReports is how a campaign tells its Candidate what happened.
// Every call returns at once: the candidate only queues what it is told.
type campaignReports interface {
	engineReports
	// status says the candidate's role, the leader and the term now, and
	// err, not nil, with the final status.
	status(role Role, leader string, token uint64, value string, err error)
}

// engineReports is what both engines report.
type engineReports interface {
	storeError(err *storeFailure) // a store error; the engine keeps trying
	storeWorked()                 // a store call worked (for Health)
	ended(err error)              // the engine stopped for err (nil: Stop or a cancel)
}

// newCampaign prepares the campaign of node for key, with leases kept by
// leases and reports to out.
func newCampaign(ctx context.Context, client Backend, key, node string, ttl time.Duration, cfg *config,
	clock elapsed, leases *leaseKeeper, values *proclamation, handoff *successorBox, out campaignReports) *campaign {
	e := &campaign{node: node, ttl: ttl, leases: leases, values: values, handoff: handoff, out: out, id: newInstanceID()}
	e.observer = newObserver(ctx, client, key, cfg, clock, out)
	return e
}

// begin reads the election before RunForElection returns.
func (e *campaign) begin() error {
	if err := e.observer.begin(); err != nil {
		return err
	}
	e.startAt = e.readSent
	e.publish()
	return nil
}

// run campaigns until the context ends or the election ends, then steps
// down and releases the record.
func (e *campaign) run() (err error) {
	defer func() { e.finish(err) }()
	return e.runLoop(e, e.leases.wake)
}

// step does whatever is due now, and publishes the candidate's status.
func (e *campaign) step() error {
	if err := e.work(); err != nil {
		return err
	}
	e.publish()
	return nil
}

// work does at most one write, plus a read if needed.
func (e *campaign) work() error {
	now := e.clock()
	if e.ctx.Err() != nil {
		return nil
	}
	e.doubtWatch(now)
	if !e.watch.running() && now >= e.watchAt {
		e.openWatch()
	}
	if now < e.retryAt {
		return nil
	}
	if e.pollDue(now) {
		s, ok := e.readNow()
		if !ok {
			return nil
		}
		e.uncertain = false
		e.observe(s, false)
	}
	if e.ended() {
		return ErrElectionEnded
	}
	if e.hold != nil {
		e.stepHolding(now)
	} else {
		e.stepWaiting(now)
	}
	return nil
}

// stepHolding renews, relinquishes, or releases after the lease ended.
func (e *campaign) stepHolding(now time.Duration) {
	h := e.hold
	if !e.leases.holds(h.lease) {
		switch why := h.lease.endedBy(); why {
		case ErrResigned, ErrRelinquished, ErrHandedOff:
			if why == ErrHandedOff && h.successor == "" { // once: a release that failed is retried to the same successor
				h.successor = e.handoff.take()
			}
			if e.release() {
				e.holdOff(why)
			}
		default:
			// The deadline passed: the record is still ours, so the
			// candidate may start a new term at once (stepWaiting).
			e.hold = nil
		}
		return
	}
	if now >= h.relinquishAt {
		if !e.leases.stepDown(h.lease, ErrRelinquished) {
			return // it ended meanwhile (its deadline, a HandOff): the next step sees why
		}
		if e.release() {
			e.holdOff(ErrRelinquished)
		}
		return
	}
	if now >= h.renewDue || h.rec.Value != e.values.wanted() {
		e.renew()
		return
	}
}

// stepWaiting acquires the record when it is free, ours, or expired.
func (e *campaign) stepWaiting(now time.Duration) {
	if now < e.acquireAt() {
		return
	}
	// What the watch delivered while the engine was busy (a slow read) is
	// newer than what it is about to act on: look at it first.
	e.takeWaiting(e)
	if e.hold == nil && !e.needRead && now >= e.acquireAt() {
		e.acquire()
	}
}

// holdOff leaves the election to the others for a while after this
// candidate gave its term up (why): the resign holdoff, after the
// successor's window for a HandOff, counted from now, when the release is
// known to be applied (its reply, or a read or event that shows it or a
// later record). Any other reason holds nothing off.
func (e *campaign) holdOff(why Reason) {
	var d time.Duration
	switch why {
	case ErrResigned, ErrRelinquished:
		d = e.cfg.resignHoldoff
	case ErrHandedOff:
		d = e.ttl + e.cfg.resignHoldoff // the window, then the holdoff
	default:
		return
	}
	e.holdoffUntil = max(e.holdoffUntil, e.clock()+d)
}

// acquireAt is when this candidate may try to take the record as it stands.
func (e *campaign) acquireAt() time.Duration {
	return max(e.acquireAtRecord(), e.acquireAtHistory())
}

// acquireAtHistory is when this candidate may take a term as far as the
// store's past is concerned, whatever the record shows now.
func (e *campaign) acquireAtHistory() time.Duration {
	// A new process knows nothing of a leader whose record the store lost
	// (Timings.StartupWait).
	at := e.startAt + e.cfg.startupWait
	if e.backs > 0 && !(e.lostLive && e.lost.id == e.id) {
		// The store went back in time: whoever held the newer record may
		// lead until its lease ends, whatever was written since. Candidates
		// share no other clock than the moment each saw the store go back.
		// Only a candidate that still led at that moment knows that no one
		// else can have.
		at = max(at, e.lostTill, e.lostAt+e.ttl)
	}
	return at
}

// acquireAtRecord is acquireAt judged from the record alone.
func (e *campaign) acquireAtRecord() time.Duration {
	s := e.cur
	switch {
	case s.kind == snapMissing:
		return e.holdoffUntil
	case s.kind == snapForeign:
		return e.seenAt + max(e.ttl, s.rec.TTL())
	case s.rec.ID == e.id && e.confirmedStill(s):
		// Exactly our last confirmed write: no one wrote since, so no one
		// else can have led since it was confirmed.
		return 0
	case s.rec.Free() && s.rec.Successor == e.node:
		// Handed to this candidate, even back by the one it handed its
		// own term to: no holdoff of its own stands in the way.
		return 0
	case s.rec.Free() && s.rec.Successor != "" && s.rec.Successor != e.node:
		// Handed off to another: its window first, counted from when
		// this candidate saw the release.
		return max(e.seenAt+min(s.rec.SuccessorWindow(), MaxTTL), e.holdoffUntil)
	case s.rec.Free() && s.rec.TTL() == 0:
		return e.holdoffUntil
	default:
		// Held by another, or ended while someone held it: wait until the
		// record has stayed unchanged for the holder's whole TTL on this
		// candidate's clock. The holder stepped down a whole safety margin
		// before that on its own.
		at := e.seenAt + s.rec.TTL()
		if s.rec.Free() {
			at = max(at, e.holdoffUntil)
		}
		return at
	}
}

// confirmedStill reports whether s is our last confirmed write, under the
// same index. Any other record naming us (a write of ours that the store
// applied late, perhaps over someone else's record after an index was
// reused, or a record restored from a backup) is waited out like anyone
// else's.
func (e *campaign) confirmedStill(s snapshot) bool {
	c := e.confirmed
	return c != nil && s.pair != nil && s.pair.LastIndex == c.LastIndex && bytes.Equal(s.pair.Value, c.Value)
}

// nextWake is when step next has something to do.
func (e *campaign) nextWake() time.Duration {
	at := min(e.nextPoll(), e.nextDoubt())
	if e.needRead {
		at = 0
	}
	switch h := e.hold; {
	case h == nil:
		at = min(at, e.acquireAt())
	case !e.leases.holds(h.lease):
		at = 0
	case h.rec.Value != e.values.wanted():
		at = 0 // a value to publish
	default:
		at = min(at, h.renewDue, h.relinquishAt)
	}
	if !e.watch.running() {
		at = min(at, e.watchAt)
	}
	return max(at, e.retryAt)
}

// put compare-and-swaps next over prev (nil: create) and classifies the
// outcome: done (with the stored pair, read back if the store did not
// return exactly what was written), conflict (the key changed since prev,
// or the write's fate is unknown and a read must tell), or err.
func (e *campaign) put(op string, parent context.Context, next *record, prev *store.KVPair) (pair *store.KVPair, conflict bool, err error) {
	ctx, cancel := e.reqCtx(parent)
	defer cancel()
	readBack := func() (snapshot, error) { return e.read(parent) }
	sent := e.clock()
	r, err := casRecord(ctx, e.client, e.key, next, prev, readBack)
	e.measured(op, sent, err, err == nil && !r.landed)
	var serr *storeFailure
	switch {
	case errors.As(err, &serr):
		return nil, false, err // the read back failed
	case err != nil:
		return nil, false, &storeFailure{Op: op, Key: e.key, Err: err}
	case !r.landed:
		return nil, true, nil
	case r.pair == nil:
		// The read back shows someone else's write after ours.
		e.observe(r.later, false)
		return nil, true, nil
	}
	return r.pair, false, nil
}

// acquire tries to start a term over the record as last seen.
func (e *campaign) acquire() {
	if e.ended() {
		// A watch event taken just before (takeWaiting) showed the end
		// of the election this candidate joined: the next step stops it.
		// Written over, the ended record would hide the end from
		// everyone (seen with EndElection right after RunForElection on
		// a missing key).
		return
	}
	prev := e.cur
	// A foreign value of a later version keeps its count too (prev.rec).
	next := record{Leader: e.node, ID: e.id, Term: max(prev.rec.Term, e.maxTerm) + 1,
		TTLms: e.ttl.Milliseconds(), Gen: e.gen, Since: e.clk.Now().UTC().Format(time.RFC3339Nano),
		Value: e.values.wanted()}
	sent := e.clock()
	pair, conflict, err := e.put("acquire", e.ctx, &next, prev.pair)
	switch {
	case err != nil:
		e.uncertain = true
		e.needRead = true
		e.failed(err)
		e.acquireFailed()
	case conflict:
		e.acquireFails = 0
		e.conflicted()
	default:
		e.acquireFails = 0
		e.succeeded()
		e.won(next, pair, sent)
	}
}

// acquireFailed paces a candidate whose acquires fail while its reads
// work (a store that lets it read but refuses it the right to write): the
// read after each failure resets the observer's backoff, so without this
// it would retry every RetryMin (measured: 75 creates a second refused by
// a Kubernetes API server). Its own failures in a row set the pace,
// doubling from RetryMin to RetryMax.
func (e *campaign) acquireFailed() {
	e.acquireFails++
	wait := min(e.cfg.retryMin<<min(e.acquireFails-1, 20), e.cfg.retryMax)
	e.retryAt = max(e.retryAt, e.clock()+wait)
}

// conflicted notes a compare-and-swap that failed because the key changed:
// a read must say how. Conflicts that keep coming while no read shows a new
// state (a store that misbehaves) are retried with a growing backoff, never
// in a tight loop; a leader's still come in time for its deadline.
func (e *campaign) conflicted() {
	e.needRead = true
	e.conflicts++
	if e.conflicts < 3 {
		return
	}
	wait := min(e.cfg.retryMin<<min(e.conflicts-3, 20), e.cfg.retryMax)
	if h := e.hold; h != nil {
		left := h.lease.deadlineAt() - e.clock()
		wait = min(wait, max(left/4, time.Millisecond))
	}
	e.retryAt = max(e.retryAt, e.clock()+wait)
}

// won starts the term whose acquire was sent at sent.
func (e *campaign) won(rec record, pair *store.KVPair, sent time.Duration) {
	e.wrote(rec, pair)
	e.confirmed = pair
	e.uncertain = false
	deadline := sent + e.ttl - e.cfg.safetyMargin
	if e.clock() >= deadline {
		return // too slow to be of use: the record is ours, a new term starts at once
	}
	e.values.wrote(rec.Term, rec.Value, e.id, pair)
	e.handoff.take() // a successor named for an earlier term that never got to its release
	t := Term{Token: rec.Term, Began: e.clk.Now()}
	l := e.leases.start(e.ctx, t, deadline)
	if l == nil {
		return // stopped meanwhile: no term; finish releases the record
	}
	if !e.watch.running() {
		e.watchAt = 0
	}
	e.hold = &holding{rec: rec, pair: pair, lease: l, renewDue: e.renewAfter(sent), unconfirmed: -1,
		relinquishAt: e.relinquishTime(e.clock())}
	e.publish()
}

// renew rewrites the record to confirm the lease.
func (e *campaign) renew() {
	h := e.hold
	next := h.rec
	next.Seq++
	next.Value = e.values.wanted()
	sent := e.clock()
	if h.unconfirmed < 0 {
		h.unconfirmed = sent
	}
	pair, conflict, err := e.put("renew", e.ctx, &next, h.pair)
	switch {
	case err != nil:
		e.failed(err)
		// Retry in time for the deadline whatever the backoff says.
		left := h.lease.deadlineAt() - e.clock()
		e.retryAt = min(e.retryAt, e.clock()+max(left/4, time.Millisecond))
		h.renewDue = 0
	case conflict:
		// Someone else wrote, or an earlier renewal of ours landed late:
		// the read decides (observe).
		h.renewDue = 0
		e.conflicted()
	default:
		e.succeeded()
		e.conflicts = 0
		e.confirmed = pair
		h.rec, h.pair = next, pair
		e.confirm(h)
		h.renewDue = e.renewAfter(sent)
		e.wrote(next, pair)
		e.values.wrote(next.Term, next.Value, e.id, pair)
	}
}

// renewAfter is when the renewal after a write sent at sent is due: a
// renewal interval later, at the start of its slot (elapsed.slotStart).
func (e *campaign) renewAfter(sent time.Duration) time.Duration {
	return e.axis.slotStart(sent+e.cfg.renewInterval, e.cfg.renewInterval)
}

// confirm extends the lease from the earliest write not yet confirmed: the
// store applied every later write after that moment, so no observer can
// have started counting the TTL earlier.
func (e *campaign) confirm(h *holding) {
	if h.unconfirmed >= 0 {
		h.lease.extend(e.clock(), h.unconfirmed+e.ttl-e.cfg.safetyMargin)
		h.unconfirmed = -1
	}
}

// release frees the record so that a waiting candidate wins at once. It
// returns true when the record no longer shows this candidate.
func (e *campaign) release() bool {
	return e.releaseUnder(e.ctx)
}

func (e *campaign) releaseUnder(ctx context.Context) bool {
	for range 3 {
		h := e.hold
		if h == nil {
			// A read back showed a later record (observe dropped the hold).
			return true
		}
		next := h.rec
		next.Seq++
		next.Leader, next.ID, next.TTLms, next.Since, next.Value = "", "", 0, "", ""
		next.Successor, next.SuccessorMs = h.successor, 0
		if h.successor != "" {
			next.SuccessorMs = e.ttl.Milliseconds()
		}
		pair, conflict, err := e.put("release", ctx, &next, h.pair)
		switch {
		case err != nil:
			e.failed(err)
			return false
		case !conflict:
			e.succeeded()
			e.hold = nil
			if pair != nil {
				e.wrote(next, pair)
			} else {
				e.needRead = true
			}
			e.publish()
			return true
		}
		// A conflict: if a late write of ours is what changed the record,
		// release that one; otherwise someone else holds it now.
		s, err := e.read(ctx)
		if err != nil {
			e.failed(err)
			return false
		}
		if s.kind == snapRecord && s.rec.ID == e.id && e.hold != nil {
			h.rec, h.pair = s.rec, s.pair
			continue
		}
		e.hold = nil
		e.observe(s, false)
		return true
	}
	return false
}

// observe takes a state of the key from a read or a watch event and acts on
// what it means for this candidate.
func (e *campaign) observe(s snapshot, fromWatch bool) {
	if h := e.hold; h != nil && !fromWatch && s.kind == snapRecord && s.rec.Token == h.rec.Token {
		h.pair = s.pair // our record, perhaps stored again under another index
	}
	leading, backs := e.leases.valid() != nil, e.backs
	if !e.adopt(s, fromWatch) {
		return
	}
	if e.backs != backs {
		e.lostLive = leading
		e.values.storeWentBack()
	}
	e.conflicts = 0
	if h := e.hold; h != nil {
		if e.lateWriteOfOurs(s) {
			// A write of ours we had not seen confirmed.
			h.rec, h.pair, e.confirmed = s.rec, s.pair, s.pair
			e.values.wrote(s.rec.Term, s.rec.Value, e.id, s.pair)
			if e.leases.holds(h.lease) {
				e.confirm(h)
				h.renewDue = min(h.renewDue, e.renewAfter(e.clock()))
			}
		} else {
			// A term given up whose release failed may show here as that
			// release, applied after all: its holdoff starts now.
			e.holdOff(h.lease.endedBy())
			why := ErrLostLeadership
			if e.ended() {
				why = ErrElectionEnded
			}
			e.leases.stepDown(h.lease, why)
			e.hold = nil
		}
	}
	e.publish()
}

// lateWriteOfOurs reports whether s is the one write of the held term that
// this candidate may have sent without seeing it confirmed: the next in its
// sequence. A record of its term with an older sequence is the store gone
// back in time (restored from a backup), never a write to trust.
func (e *campaign) lateWriteOfOurs(s snapshot) bool {
	h := e.hold
	return s.kind == snapRecord && !e.rewound && s.rec.ID == e.id && s.rec.Gen == h.rec.Gen &&
		s.rec.Term == h.rec.Term && s.rec.Seq == h.rec.Seq+1
}

// publish updates the candidate's status from what it knows.
func (e *campaign) publish() {
	role, leader, token := RoleFollower, e.leader(), e.cur.rec.Term
	if l := e.leases.lease(); l != nil {
		role, leader, token = RoleLeader, e.node, l.term.Token
	}
	value := ""
	if leader != "" {
		value = e.cur.rec.Value
	}
	e.out.status(role, leader, token, value, nil)
}

// relinquishTime is when a term starting now must be given up, or never.
func (e *campaign) relinquishTime(now time.Duration) time.Duration {
	if s := e.cfg.relinquishSchedule; s != nil {
		wall := e.clk.Now()
		next := s.Next(wall)
		if next.IsZero() {
			return never
		}
		if d := next.Sub(wall); d < never-now {
			return now + d
		}
		return never
	}
	if d := e.cfg.relinquishInterval; d > 0 && d < never-now {
		return now + d
	}
	return never
}

// finish steps down and, unless the election ended, releases the record so
// that the next candidate wins without waiting for the TTL.
func (e *campaign) finish(err error) {
	why := ErrStopped
	if errors.Is(err, ErrElectionEnded) {
		why = ErrElectionEnded
	}
	e.leases.stepDownNow(why)
	if why == ErrStopped {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), e.cfg.requestTimeout)
		e.ctx = ctx // the run's context is done; the last requests use this one
		if e.hold == nil && (e.uncertain || (e.cur.kind == snapRecord && e.cur.rec.ID == e.id)) {
			if s, rerr := e.read(ctx); rerr == nil && s.kind == snapRecord && s.rec.ID == e.id {
				e.hold = &holding{rec: s.rec, pair: s.pair}
			}
			e.uncertain = false
		}
		if e.hold != nil {
			e.releaseUnder(ctx)
		}
		cancel()
	}
	e.watch.close(e.cfg.requestTimeout)
	e.out.ended(err)
	e.out.status(RoleStopped, "", e.cur.rec.Term, "", err)
}
