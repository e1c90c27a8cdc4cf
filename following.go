package leadership

import (
	"context"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// following is the engine of a Follower: one goroutine that turns what the
// observer sees into leader changes, and declares a leader gone once its
// record has stayed unrenewed for its TTL (confirmed by a read).
type following struct {
	observer
	f         *Follower
	expired   bool // the current holder's lease ran out unrenewed
	checked   bool // a read showed the current holder still unrenewed
	lateWrite bool // one write of the expired term was seen since it expired
	published bool
}

func newFollowing(f *Follower, ctx context.Context) *following {
	e := &following{f: f}
	e.observer = newObserver(ctx, f.client, f.key, &f.cfg, f.clock)
	e.onError = func(err *StoreError) { f.errs.push(err) }
	return e
}

func (e *following) begin() error {
	if err := e.observer.begin(); err != nil {
		return err
	}
	e.publish()
	return nil
}

func (e *following) loop() (err error) {
	defer func() {
		e.watch.close(e.cfg.requestTimeout)
		if err != nil {
			e.f.errs.push(err)
		}
	}()
	timer := time.NewTimer(never)
	defer timer.Stop()
	// The last moment the engine is known to have found no event waiting:
	// it had been waiting for one until then.
	listened := e.clock()
	for {
		if err := e.step(); err != nil {
			return err
		}
		timer.Reset(max(e.nextWake()-e.clock(), 0))
		enter := e.clock()
		select {
		case <-e.ctx.Done():
			return nil
		case <-timer.C:
			if e.clock()-enter >= time.Millisecond {
				listened = e.clock()
			}
		case p, ok := <-e.watch.events:
			// An event taken at once was waiting while the engine was busy
			// (a slow read, or the events before it in a backlog): it may
			// be as old as the moment the engine last found none waiting.
			at := e.clock()
			if at-enter < time.Millisecond {
				at = listened
			}
			listened = at
			e.event(p, ok, at)
		}
	}
}

// event handles what the watch delivered; it arrived no earlier than at.
func (e *following) event(p *store.KVPair, ok bool, at time.Duration) {
	if !ok {
		e.watchClosed()
		return
	}
	e.watchEvent()
	e.eventAt = at
	e.observe(snapshotOf(p), true)
	e.eventAt = -1
}

// held reports whether the current record names a leader.
func (e *following) held() bool {
	return e.cur.kind == snapRecord && !e.cur.rec.free() && !e.cur.rec.Ended
}

func (e *following) step() error {
	now := e.clock()
	if e.ctx.Err() != nil {
		return nil
	}
	// Nothing the store does may delay the expiry: every call is abandoned
	// at it.
	// A read or watch open is also given up after a poll interval, so that
	// what the watch delivers meanwhile is not left waiting behind it.
	deadline := now + e.cfg.pollInterval
	if e.held() && !e.expired {
		deadline = min(deadline, e.expiresAt())
	}
	if !e.watch.running() && now >= e.watchAt {
		e.openWatchBy(deadline)
	}
	// A lease that no read showed renewed in time is over: its holder has
	// stepped down by now, whether or not the store answers.
	if e.held() && !e.expired && now >= e.expiresAt() {
		e.expired = true
		e.publish()
	}
	// Before that, a read confirms whether a lease that looks unrenewed
	// really is (a watch may have missed the renewal); it must answer
	// before the expiry to count.
	checking := e.held() && !e.expired && !e.checked && now >= e.checkAt()
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

// expiresAt is when the follower stops naming the current holder unless it
// sees it renewed: a tenth of the TTL before candidates may take over, so
// that a vanished leader is followed by "" and then its successor.
func (e *following) expiresAt() time.Duration {
	ttl := e.cur.rec.ttl()
	return e.freshAt + ttl - ttl/10
}

// checkAt is when a read checks a holder not seen renewed, in time to
// answer before expiresAt.
func (e *following) checkAt() time.Duration {
	ttl := e.cur.rec.ttl()
	return e.freshAt + ttl - ttl/5
}

func (e *following) nextWake() time.Duration {
	at := e.nextPoll()
	if e.needRead {
		at = 0
	}
	if !e.watch.running() {
		at = min(at, e.watchAt)
	}
	at = max(at, e.retryAt)
	if e.held() && !e.expired {
		at = min(at, e.expiresAt())
		if !e.checked {
			at = min(at, max(e.checkAt(), e.retryAt))
		}
	}
	return at
}

func (e *following) observe(s snapshot, fromWatch bool) {
	prev, before := e.cur, e.lastObs
	if !e.adopt(s, fromWatch) {
		return
	}
	e.checked = false
	if e.expired && sameTerm(prev, e.cur) {
		// A write of a term already declared gone is dated from the last
		// time the store was seen without it, never from its arrival: the
		// watch may deliver it late (buffered across a partition).
		e.freshAt = min(e.freshAt, before)
	}
	if e.expired && !e.lateWrite && sameTerm(prev, e.cur) {
		// A write of a term already declared gone may be one its holder sent
		// before it stepped down, applied late by the store (a paused
		// server): it proves nothing. The holder is named again only once a
		// further write of the term shows it renewing, which it does only
		// while it leads.
		e.lateWrite = true
		return
	}
	e.expired, e.lateWrite = false, false
	e.publish()
}

// sameTerm reports whether two snapshots show the same holder in the same
// term of the same election.
func sameTerm(a, b snapshot) bool {
	return a.kind == snapRecord && b.kind == snapRecord && !a.rec.free() &&
		a.rec.ID == b.rec.ID && a.rec.Term == b.rec.Term && a.rec.Gen == b.rec.Gen
}

// publish reports the leader if it changed (the first call always does).
func (e *following) publish() {
	leader := e.leader()
	if e.expired || e.ended() {
		leader = ""
	}
	o := Observation{Leader: leader, Term: e.cur.rec.Term, At: time.Now()}
	old := e.f.view.Load()
	if e.published && old.Leader == o.Leader && old.Term == o.Term {
		return
	}
	nameChanged := !e.published || old.Leader != o.Leader
	e.published = true
	e.f.view.Store(&o)
	e.f.events.push(o)
	if nameChanged {
		e.f.leaders.push(o.Leader)
	}
}
