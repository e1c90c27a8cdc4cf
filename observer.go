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
	client store.Store
	key    string
	cfg    *config
	ctx    context.Context
	clock  func() time.Duration

	gen       uint64        // the election generation joined at the start
	seen      bool          // a record of this election has been seen
	recreated bool          // a read showed the record deleted and written anew
	cur       snapshot      // latest known state of the key
	seenAt    time.Duration // when cur was first seen
	needRead  bool          // a hint said something a read must confirm
	lastRead  time.Duration

	watch      keyWatch
	watchAt    time.Duration // when to reopen a failed watch
	watchFails int           // watches that failed or closed in a row

	backoff time.Duration
	retryAt time.Duration // no store request before this

	onError func(*StoreError) // reports a store error
	warned  []byte            // the foreign value already reported
}

func newObserver(ctx context.Context, client store.Store, key string, cfg *config, clock func() time.Duration) observer {
	return observer{
		client: client, key: key, cfg: cfg, ctx: ctx, clock: clock,
		watch: keyWatch{client: client, key: key},
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
	if s.kind == snapRecord {
		o.gen, o.seen = s.rec.Gen, true
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
		o.report(&StoreError{Op: "get", Key: o.key, Err: ErrForeignValue})
	}
}

// reqCtx bounds one store request.
func (o *observer) reqCtx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, o.cfg.requestTimeout)
}

// read gets the key with a linearizable read where the backend has one.
func (o *observer) read(parent context.Context) (snapshot, error) {
	ctx, cancel := o.reqCtx(parent)
	defer cancel()
	pair, err := o.client.Get(ctx, o.key, &store.ReadOptions{Consistent: true})
	switch {
	case errors.Is(err, store.ErrKeyNotFound):
		return snapshot{kind: snapMissing}, nil
	case err != nil:
		return snapshot{}, &StoreError{Op: "get", Key: o.key, Err: err}
	}
	return snapshotOf(pair), nil
}

// adopt makes s the current state if it is later than what is known, and
// reports whether it did. A watch saying the key is gone is only a hint: a
// read must confirm it.
func (o *observer) adopt(s snapshot, fromWatch bool) bool {
	if fromWatch && s.kind == snapMissing {
		o.needRead = o.needRead || o.seen
		return false
	}
	if !s.supersedes(o.cur) {
		// Every write raises the record's counters and a client never sees
		// a store go back in time, so a read showing lower counters means
		// the key was deleted and written anew: the election joined is over.
		if !fromWatch && s.kind == snapRecord && o.cur.kind == snapRecord && s.rec.Token != o.cur.rec.Token {
			o.recreated = true
			o.cur, o.seenAt = s, o.clock()
			return true
		}
		return false
	}
	o.cur, o.seenAt = s, o.clock()
	if s.kind == snapRecord {
		o.seen = true
	}
	o.warnForeign()
	return true
}

// ended reports whether the election this observer joined has ended: a
// later generation was written, or the key vanished after a record of it
// was seen (DeleteElection).
func (o *observer) ended() bool {
	if o.recreated {
		return true
	}
	if o.cur.kind == snapRecord {
		return o.cur.rec.Gen > o.gen
	}
	return o.cur.kind == snapMissing && o.seen
}

// watchedPollFactor stretches the poll interval while a watch runs: the
// watch carries the changes, and the slow poll catches what some backends'
// watches miss (a change between their first read and the watch, a delete).
const watchedPollFactor = 3

// pollDue reports whether the key should be read now: a hint asked for it,
// or a poll interval has passed.
func (o *observer) pollDue(now time.Duration) bool {
	return o.needRead || now >= o.nextPoll()
}

// nextPoll is when the next poll is due, ignoring needRead.
func (o *observer) nextPoll() time.Duration {
	if o.watch.running() {
		return o.lastRead + watchedPollFactor*o.cfg.pollInterval
	}
	return o.lastRead + o.cfg.pollInterval
}

// readNow reads the key and adopts what it shows. It returns the snapshot
// read, and false after a store error (already reported, backoff set).
func (o *observer) readNow() (snapshot, bool) {
	s, err := o.read(o.ctx)
	o.lastRead = o.clock()
	if err != nil {
		o.failed(err)
		return snapshot{}, false
	}
	o.needRead = false
	o.succeeded()
	return s, true
}

// openWatch (re)opens the watch; on failure it is retried later.
func (o *observer) openWatch() {
	err := o.watch.start(o.ctx)
	if err == nil {
		return
	}
	o.watchFailed()
	// A missing key cannot be watched on some backends: not worth reporting.
	if !errors.Is(err, store.ErrKeyNotFound) && o.ctx.Err() == nil {
		o.report(&StoreError{Op: "watch", Key: o.key, Err: err})
	}
}

// watchClosed handles a watch channel the backend closed.
func (o *observer) watchClosed() {
	o.watch.ended()
	o.watchFailed()
	o.needRead = true
}

// watchFailed schedules the next watch with a backoff, so that a backend
// whose watch closes at once (on a missing key, say) is not hammered.
func (o *observer) watchFailed() {
	o.watchFails++
	wait := o.cfg.retryMin << min(o.watchFails-1, 20)
	o.watchAt = o.clock() + min(wait, max(o.cfg.pollInterval, o.cfg.retryMin))
}

// watchEvent notes that the watch works: the store is reachable again, so
// a backoff from earlier errors no longer needs to be waited out.
func (o *observer) watchEvent() {
	o.watchFails = 0
	if o.backoff > 0 {
		o.backoff = 0
		o.retryAt = min(o.retryAt, o.clock())
	}
}

// failed reports a store error and backs off.
func (o *observer) failed(err error) {
	if o.ctx.Err() != nil {
		return
	}
	var serr *StoreError
	if !errors.As(err, &serr) {
		serr = &StoreError{Op: "store", Key: o.key, Err: err}
	}
	o.report(serr)
	if o.backoff == 0 {
		o.backoff = o.cfg.retryMin
	} else {
		o.backoff = min(o.backoff*2, o.cfg.retryMax)
	}
	// Full jitter on the upper half keeps many clients from retrying in step.
	wait := o.backoff/2 + rand.N(o.backoff/2+1)
	o.retryAt = o.clock() + wait
}

// succeeded resets the backoff after a store request worked.
func (o *observer) succeeded() { o.backoff = 0 }

func (o *observer) report(err *StoreError) {
	o.cfg.logger.Warn("leadership: store error", "key", o.key, "op", err.Op, "err", err.Err)
	if o.onError != nil {
		o.onError(err)
	}
}

// never is a time that does not come.
const never = time.Duration(1<<63 - 1)

// isConflict reports whether a compare-and-swap failed because the key
// changed, appeared or vanished since it was read.
func isConflict(err error) bool {
	return errors.Is(err, store.ErrKeyModified) || errors.Is(err, store.ErrKeyExists) || errors.Is(err, store.ErrKeyNotFound)
}
