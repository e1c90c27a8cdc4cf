package leadership

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// observer is the part of the engine that candidates and followers share:
// it knows the latest state of the election key and when it first saw it,
// keeps a watch open as a hint, reads the key when a hint is not enough, and
// backs off after store errors. Only the goroutine that owns it uses it.
type observer struct {
	client Backend
	key    string
	cfg    *config
	ctx    context.Context
	clk    timeSource
	clock  func() time.Duration // the owner's time axis, on clk
	axis   elapsed              // the same axis: the slots polls and renewals start at

	gen      uint64        // the election generation joined
	genKnown bool          // gen was taken from a record (not joined while the key was missing)
	seen     bool          // a record of this election has been seen
	high     record        // the newest record seen, even if the store went back since
	maxTerm  uint64        // the highest term seen, so tokens grow even if the store forgets
	maxToken string        // the write token of the record that showed maxTerm
	belowMax uint64        // the highest term seen before that record
	cur      snapshot      // latest known state of the key
	seenAt   time.Duration // when cur was first seen: after the store applied it
	freshAt  time.Duration // a moment the store had not yet applied cur: no later than that
	lastObs  time.Duration // the last moment the store was seen holding cur
	readSent time.Duration // when the last read was sent
	gap      bool          // the store or the watch failed, or a watch opened, and no read sent since has answered
	gapAt    time.Duration // when it last failed or a watch opened
	watched  bool          // a watch was opened before
	eventAt  time.Duration // the earliest the watch event being handled may have arrived; -1: now
	listened time.Duration // the last moment the current watch was known to hold no event: its open, or the loop found none waiting
	needRead bool          // a hint said something a read must confirm
	lastRead time.Duration
	liveAt   time.Duration // the last time a watch event (outside a gap) or a write of ours showed a newer state

	// The store went back in time (lost or restored its data): cur is a
	// state older than one already seen. lost describes the newest state
	// seen before, whose holder may still be acting on it.
	rewound  bool
	lost     lostHolder
	lostAt   time.Duration // when the store was last seen going back
	lostTill time.Duration // the lost holders' leases may last until then
	backs    int           // times the store was seen going back
	// A watch event showed a holder that the observer did not adopt:
	// written after the store went back, perhaps (whatever its counters: a
	// candidate that never saw the newest record numbers its term from an
	// older one), and renewed since as far as anyone knows, until a read
	// shows it or shows it gone.
	hinted  bool
	hint    record        // the newest such record
	hintTTL time.Duration // the longest lease among them

	watch      keyWatch
	watchAt    time.Duration // when to reopen a failed watch
	watchFails int           // watches that failed or closed in a row
	openedAt   time.Duration // when the current watch opened
	settleAt   time.Duration // the next read that checks what a new watch may have missed; 0: none
	settleStep time.Duration // the wait before it
	heard      bool          // the watch delivered an event since the last read was sent
	suspectAt  time.Duration // a poll found a change the watch has not delivered: doubted if no event comes by then; 0: none
	doubted    bool          // a read found a change the watch missed, and no event since showed one first

	backoff time.Duration
	retryAt time.Duration // no store request before this

	reports engineReports // store errors and calls that worked, to the owner
	outage  outage        // the store errors since the last request that worked
	warned  []byte        // the foreign value already reported
}

func newObserver(ctx context.Context, client Backend, key string, cfg *config, clock elapsed, reports engineReports) observer {
	return observer{
		client: client, key: key, cfg: cfg, ctx: ctx, clk: clock.clk, clock: clock.now, axis: clock, reports: reports,
		watch: keyWatch{client: client, key: key, clk: clock.clk}, eventAt: -1,
	}
}

// begin reads the key once and opens the watch: the state every decision
// starts from. The read's error is returned; a watch error is not (the
// engine polls until the watch opens).
func (o *observer) begin() error {
	s, err := o.read(o.ctx)
	if err != nil {
		return err
	}
	o.cur, o.seenAt, o.lastRead = s, o.clock(), o.clock()
	o.freshAt, o.lastObs = o.readSent, o.readSent
	o.noteTerm(s.rec)
	if s.kind == snapRecord {
		o.gen, o.genKnown = s.rec.Gen, true
		o.noteRecord(s.rec)
	}
	o.warnForeign()
	o.openWatch()
	return nil
}

// warnForeign reports, once per value, that the key holds a value this
// library did not write.
func (o *observer) warnForeign() {
	// Compared by content: some stores report no index (LastIndex 0).
	if o.cur.kind == snapForeign && !bytes.Equal(o.cur.pair.Value, o.warned) {
		o.warned = bytes.Clone(o.cur.pair.Value)
		o.cfg.logger.Warn("leadership: the election key holds a value this library did not write", "key", o.key)
		o.report(&storeFailure{Op: "get", Key: o.key, Err: ErrForeignValue})
	}
}

// reqCtx bounds one store request.
func (o *observer) reqCtx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, o.cfg.requestTimeout)
}

// read gets the key with a linearizable read where the backend has one.
func (o *observer) read(parent context.Context) (snapshot, error) {
	o.readSent = o.clock()
	ctx, cancel := o.reqCtx(parent)
	defer cancel()
	s, err := readKey(ctx, o.client, o.key)
	o.measured("get", o.readSent, err, false)
	if err != nil {
		return snapshot{}, &storeFailure{Op: "get", Key: o.key, Err: err}
	}
	return s, nil
}

// leader is the name of the current holder as far as the observer knows,
// or "". A record the store went back to names a holder from the past.
func (o *observer) leader() string {
	if o.rewound {
		return ""
	}
	return o.cur.leader()
}

// ended reports whether the election this observer joined has ended: a
// later generation was written (EndElection, DeleteElection).
func (o *observer) ended() bool {
	if o.cur.kind != snapRecord {
		return false
	}
	if !o.genKnown {
		// Joined while the key was missing, or saw the store go back to
		// it: an ended record is the end of whatever election it joined.
		return o.cur.rec.Ended
	}
	return o.cur.rec.Gen > o.gen
}

// watchedPollFactor stretches a poll interval given by Timings.Poll into
// the slow poll of a working watch (config.watchedPoll; by default half
// the TTL for candidates, 3 s or half the record's TTL for followers).
const watchedPollFactor = 3

// pollDue reports whether the key should be read now: a hint asked for it,
// or a poll interval has passed.
func (o *observer) pollDue(now time.Duration) bool {
	return o.needRead || now >= o.nextPoll()
}

// nextPoll is when the next poll is due, ignoring needRead. While a watch
// works it carries the changes, and the slow poll only catches what some
// backends' watches miss (a change between their first read and the
// watch, a delete): it counts from the last read, or from the last change
// the watch (or a write of ours) showed live, whichever is later, so that
// a holder renewing and a watch delivering the renewals cost no read. A
// watch that misses the last change (a release, a delete) or goes silent
// is read within the slow poll of its last event; a follower also reads
// at 80% of an unrenewed lease (expiry.go).
func (o *observer) nextPoll() time.Duration {
	if o.watch.running() && !o.doubted {
		every := o.cfg.watchedPoll
		if o.cfg.pollByTTL && o.cur.kind == snapRecord {
			// Half the TTL: longer than the holder's renewal interval
			// (TTL/3 by default), so that a renewal the watch delivers
			// comes before the poll it makes unneeded.
			every = max(every, o.cur.rec.TTL()/2)
		}
		at := o.axis.slotStart(max(o.lastRead, o.liveAt)+every, every)
		if o.settleAt > 0 {
			at = min(at, o.settleAt)
		}
		return at
	}
	return o.axis.slotStart(o.lastRead+o.cfg.pollInterval, o.cfg.pollInterval)
}

// readNow reads the key and adopts what it shows. It returns the snapshot
// read, and false after a store error (already reported, backoff set).
func (o *observer) readNow() (snapshot, bool) {
	return o.readBy(never)
}

// readBy is readNow with the read abandoned at deadline (observer clock)
// if the request timeout would let it run longer.
func (o *observer) readBy(deadline time.Duration) (snapshot, bool) {
	ctx := o.ctx
	if left := deadline - o.clock(); left < o.cfg.requestTimeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, max(left, 0))
		defer cancel()
	}
	polled := !o.needRead
	prev := o.readSent
	s, err := o.read(ctx)
	o.lastRead = o.clock()
	o.settled()
	if err != nil {
		o.failed(err)
		return snapshot{}, false
	}
	o.needRead = false
	o.succeeded()
	o.checkWatch(s, polled, prev)
	return s, true
}

// A watch is a hint, and may miss changes: some backends' watches start
// only after the read that opened them (kvtools' etcd watch starts after
// its first read, with no start revision, and after the caller took that
// read's event), and a watch that a client resumed after its server lost
// its data may stay silent (etcd's resumes from a revision the new server
// does not have yet). So the engine's own reads find what a watch missed:
// a few reads after each watch opens (settled), and a watch that a poll
// shows to have missed a change is opened again (checkWatch). Neither
// costs anything while a watch works and the key is quiet.

// settleFirst is the least wait before the first read that checks what a
// watch just opened may have missed; later checks wait 4 times longer
// each, until the watched poll interval takes over.
const settleFirst = 10 * time.Millisecond

// settled moves the checks of a new watch on after a read: the next one
// comes 4 times later, and none once that is a poll interval away.
func (o *observer) settled() {
	if o.settleAt == 0 || o.readSent < o.settleAt {
		return
	}
	o.settleStep *= 4
	o.settleAt = o.readSent + o.settleStep
	if o.settleStep >= o.cfg.pollInterval {
		o.settleAt = 0
	}
}

// checkWatch suspects the watch when a poll (a read no hint asked for)
// shows a state newer than the current one while the watch, open since
// before the previous read, delivered nothing since: it may have missed a
// change (kvtools' etcd watch resumed from a revision that a server
// restarted without its data does not have), or its event may only be on
// its way (a poll in the slot of a renewal reads it before the watch
// delivers it, the more so where one query watches many keys, as
// Consul's). If no event comes within watchGrace, doubtWatch opens the
// watch again. prev is when the previous read was sent.
func (o *observer) checkWatch(s snapshot, polled bool, prev time.Duration) {
	heard := o.heard
	o.heard = false
	if !polled || heard || !o.watch.running() || o.openedAt > prev || !s.supersedes(o.cur) {
		return
	}
	if o.suspectAt == 0 {
		o.suspectAt = o.clock() + min(o.cfg.pollInterval, watchGrace)
	}
}

// watchGrace is the longest a watch event may trail a poll that read the
// same change before the watch is taken for one that misses changes (or
// the poll interval, if shorter).
const watchGrace = time.Second

// doubtWatch opens the watch again when a suspicion of checkWatch was not
// lifted by an event in time. Until an event shows a change before a read
// does, the key is polled as if no watch ran, so that a watch that stays
// silent still leaves the reads to find and keep the leader.
func (o *observer) doubtWatch(now time.Duration) {
	if o.suspectAt == 0 || now < o.suspectAt {
		return
	}
	o.suspectAt = 0
	if !o.watch.running() {
		return
	}
	o.cfg.logger.Info("leadership: the watch missed a change a read showed; watching again", "key", o.key)
	o.doubted = true
	o.watch.stop()
	o.watchAt = now
}

// nextDoubt is when doubtWatch has something to do.
func (o *observer) nextDoubt() time.Duration {
	if o.suspectAt == 0 {
		return never
	}
	return o.suspectAt
}

// openWatch (re)opens the watch; on failure it is retried later.
func (o *observer) openWatch() { o.openWatchBy(never) }

// openWatchBy is openWatch with the call abandoned at deadline (observer
// clock) if the request timeout would let it run longer.
func (o *observer) openWatchBy(deadline time.Duration) {
	if o.watched {
		o.cfg.metrics.WatchRestarted(o.key)
	}
	o.watched = true
	// A new watch may first send the state it read when it opened, applied
	// at any time since the observer last saw the store, or what changed
	// meanwhile: until a read sent after the open answers (requested at
	// once), its events are not live.
	o.markGap()
	timeout := min(o.cfg.requestTimeout, max(deadline-o.clock(), time.Millisecond))
	sent := o.clock()
	err := o.watch.start(o.ctx, timeout)
	o.measured("watch", sent, err, false)
	if err == nil {
		// It may have queued events while the call ran (a slow open, a
		// write meanwhile): they may be as old as the call.
		o.listened, o.needRead = sent, true
		now := o.clock()
		o.openedAt, o.heard, o.suspectAt = now, false, 0
		o.settleStep = max(2*(now-sent), settleFirst)
		o.settleAt = now + o.settleStep
		return
	}
	o.settleAt = 0
	o.watchFailed()
	// A missing key cannot be watched on some backends: not worth reporting.
	if !errors.Is(err, store.ErrKeyNotFound) && o.ctx.Err() == nil {
		o.report(&storeFailure{Op: "watch", Key: o.key, Err: err})
	}
}

// watchClosed handles a watch channel the backend closed.
func (o *observer) watchClosed() {
	o.watch.ended()
	o.settleAt = 0
	o.watchFailed()
	o.needRead = true
}

// watchFailed schedules the next watch with a backoff, so that a backend
// whose watch closes at once (on a missing key, say) is not hammered.
func (o *observer) watchFailed() {
	o.suspectAt = 0
	o.watchFails++
	wait := o.cfg.retryMin << min(o.watchFails-1, 20)
	o.watchAt = o.clock() + min(wait, max(o.cfg.pollInterval, o.cfg.retryMin))
}

// watchEvent notes that the watch works: the store is reachable again, so
// a backoff from earlier errors no longer needs to be waited out.
func (o *observer) watchEvent() {
	o.watchFails, o.heard, o.suspectAt = 0, true, 0
	if o.backoff > 0 {
		o.backoff = 0
		o.retryAt = min(o.retryAt, o.clock())
	}
}

// failed reports a store error and backs off.
func (o *observer) failed(err error) {
	o.markGap()
	if o.ctx.Err() != nil {
		return
	}
	var serr *storeFailure
	if !errors.As(err, &serr) {
		serr = &storeFailure{Op: "store", Key: o.key, Err: err}
	}
	o.report(serr)
	if o.backoff == 0 {
		o.backoff = o.cfg.retryMin
	} else {
		o.backoff = min(o.backoff*2, o.cfg.retryMax)
	}
	// Full jitter on the upper half keeps many clients from retrying in step.
	draw := rand.N[time.Duration]
	if o.cfg.jitter != nil {
		draw = o.cfg.jitter
	}
	wait := o.backoff/2 + draw(o.backoff/2+1)
	o.retryAt = o.clock() + wait
}

// markGap notes that the observer may have missed changes: until a read
// sent from now on answers, watch events are not taken as live.
func (o *observer) markGap() { o.gap, o.gapAt = true, o.clock() }

// succeeded resets the backoff after a store request worked, and ends the
// outage, if any, with one log line.
func (o *observer) succeeded() {
	o.backoff = 0
	o.reports.storeWorked()
	if o.outage.errs > 0 {
		o.cfg.logger.Info("leadership: store recovered", "key", o.key,
			"errors", o.outage.errs, "after", o.clock()-o.outage.since)
		o.outage = outage{}
	}
}

// errorLogEvery is the least time between two store-error log lines of
// one outage: its first error is logged at once, and later ones at most
// once per interval, with the count of errors so far.
const errorLogEvery = 10 * time.Second

// outage counts the store errors since the last request that worked.
type outage struct {
	errs     int
	since    time.Duration // the first error
	loggedAt time.Duration // the last error logged
}

// report hands a store error to the owner, and logs it when it is a
// failure of the store (not a foreign value), rate-limited per outage.
func (o *observer) report(err *storeFailure) {
	if !errors.Is(err, ErrForeignValue) {
		now := o.clock()
		if o.outage.errs == 0 {
			o.outage.since = now
		}
		o.outage.errs++
		if o.outage.errs == 1 || now-o.outage.loggedAt >= errorLogEvery {
			o.outage.loggedAt = now
			o.cfg.logger.Warn("leadership: store error", "key", o.key, "op", err.Op, "err", err.Err,
				"errors", o.outage.errs, "for", now-o.outage.since)
		}
	}
	o.reports.storeError(err)
}
