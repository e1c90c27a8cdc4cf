package leadership

import (
	"context"
	"time"
)

// following is the engine of a Follower: one goroutine that turns what the
// observer sees into leader changes, and declares a leader gone once its
// record has stayed unrenewed for its TTL (expiry.go).
type following struct {
	observer
	out       followingReports
	expired   bool // the current holder's lease ran out unrenewed
	checked   bool // a read showed the current holder still unrenewed
	lateWrite bool // one write of the expired term was seen since it expired
	published bool
	stopped   bool   // the loop ended: the follower names no one
	last      Status // the last one published
}

// followingReports is how a following tells its Follower what happened.
// Every call returns at once: the follower only queues what it is told.
type followingReports interface {
	engineReports
	// observed gives the leader, term and time of a change; nameChanged
	// when the leader's name changed (or on the first call).
	observed(o Status, nameChanged bool)
}

func newFollowing(ctx context.Context, client Backend, key string, cfg *config, clock elapsed, out followingReports) *following {
	e := &following{out: out}
	e.observer = newObserver(ctx, client, key, cfg, clock, out)
	return e
}

func (e *following) begin() error {
	if err := e.observer.begin(); err != nil {
		return err
	}
	// A read slow to answer may show a holder whose lease ran out since it
	// was sent: never named.
	e.expired = e.held() && e.clock() >= e.expiresAt()
	e.publish()
	return nil
}

// run follows until the context ends or the election ends.
func (e *following) run() error {
	err := e.runLoop(e, nil)
	// Stopped, it no longer follows the holder's renewals or its lease:
	// it names no one from now on, while the watch closes and after.
	e.stopped = true
	e.publish()
	e.watch.close(e.cfg.requestTimeout)
	e.out.ended(err)
	return err
}

// held reports whether the current record names a leader.
func (e *following) held() bool {
	return e.cur.kind == snapRecord && !e.cur.rec.Free() && !e.cur.rec.Ended
}

func (e *following) step() error {
	now := e.clock()
	if e.ctx.Err() != nil {
		return nil
	}
	// Nothing the store does may delay the expiry: every call is abandoned
	// at it. Otherwise a read or a watch open has the request timeout, even
	// if that is longer than a poll interval: over a slow link (round trips
	// of 300 ms, a watch open that is a read plus a watch) a call given up
	// after a poll interval might never succeed. What the watch delivers
	// meanwhile waits behind it, and is dated from before it (takeEvent).
	deadline := never
	if e.held() && !e.expired {
		deadline = e.expiresAt()
	}
	e.doubtWatch(now)
	if !e.watch.running() && now >= e.watchAt {
		e.openWatchBy(deadline)
	}
	e.expireIfUnrenewed(now)
	checking := e.checkDue(now)
	if now >= e.retryAt && (e.pollDue(now) || checking) {
		if s, ok := e.readBy(deadline); ok {
			e.checked = checking
			e.observe(s, false)
		}
	}
	if e.ended() {
		return ErrElectionEnded
	}
	return nil
}

func (e *following) nextWake() time.Duration {
	at := min(e.nextPoll(), e.nextDoubt())
	if e.needRead {
		at = 0
	}
	if !e.watch.running() {
		at = min(at, e.watchAt)
	}
	at = max(at, e.retryAt)
	return min(at, e.nextExpiryWake())
}

func (e *following) observe(s snapshot, fromWatch bool) {
	prev, before := e.cur, e.lastObs
	if !e.adopt(s, fromWatch) {
		return
	}
	e.checked = false
	if e.expired && e.lateWriteOfExpired(prev, before) {
		return
	}
	// A state that may have been applied before the lease of its holder
	// could have run out (a read after an outage is dated from the last
	// time the store was seen without it) is not named: it would be named
	// and dropped in the same instant. It is a term already declared gone:
	// its next writes show its holder renewing (lateWriteOfExpired).
	e.expired, e.lateWrite = e.held() && e.clock() >= e.expiresAt(), false
	e.publish()
}

// publish reports the leader if it changed (the first call always does).
func (e *following) publish() {
	leader := e.leader()
	if e.expired || e.ended() || e.stopped {
		leader = ""
	}
	o := Status{Role: RoleFollower, Leader: leader, Token: e.cur.rec.Term, At: e.clk.Now()}
	if leader != "" {
		o.Value = e.cur.rec.Value
	}
	if e.published && e.last.Leader == o.Leader && e.last.Token == o.Token && e.last.Value == o.Value {
		return
	}
	nameChanged := !e.published || e.last.Leader != o.Leader
	e.published, e.last = true, o
	e.out.observed(o, nameChanged)
}
