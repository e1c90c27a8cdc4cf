package leadership

import (
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// engine is what runLoop drives: a candidate's campaign or a follower's
// following.
type engine interface {
	// step does whatever is due now; an error ends the loop.
	step() error
	// nextWake is when step next has something to do.
	nextWake() time.Duration
	// observe acts on a state of the key from a read or a watch event.
	observe(s snapshot, fromWatch bool)
}

// runLoop is the one goroutine of an engine: it runs step, then sleeps
// until the next wake, a poke on wake, or a watch event, until the run's
// context ends (nil) or step fails.
func (o *observer) runLoop(e engine, wake <-chan struct{}) error {
	timer := o.clk.NewTimer(never)
	defer timer.Stop()
	for {
		if err := e.step(); err != nil {
			return err
		}
		// An event already waiting came while step ran: takeEvent dates it
		// from the last moment the loop found none, whatever the scheduler
		// does between here and the select below.
		select {
		case p, ok := <-o.watch.events:
			o.takeEvent(e, p, ok)
			continue
		default:
		}
		timer.Reset(max(e.nextWake()-o.clock(), 0))
		entered := o.clk.Now()
		select {
		case <-o.ctx.Done():
			return nil
		case <-wake:
			o.waitedSince(entered)
		case <-timer.C():
			o.waitedSince(entered)
		case p, ok := <-o.watch.events:
			// Handed over at once, it is the next of a backlog (a watch
			// hands events one at a time): as old as the last.
			o.waitedSince(entered)
			o.takeEvent(e, p, ok)
		}
	}
}

// waitedSince notes the moment the loop last found no event waiting: now,
// if it waited since entered (on the clock: whether the select blocked).
func (o *observer) waitedSince(entered time.Time) {
	if o.clk.Now().Sub(entered) >= time.Millisecond {
		o.listened = o.clock()
	}
}

// takeEvent hands a watch event to the engine. An event taken at once was
// waiting while the engine was busy (a slow read, or the events before it
// in a backlog): it is dated from the last moment the loop found none
// waiting, and may be as old as that.
func (o *observer) takeEvent(e engine, p *store.KVPair, ok bool) {
	if !ok {
		o.watchClosed()
		return
	}
	o.watchEvent()
	o.eventAt = o.listened
	e.observe(snapshotOf(p), true)
	o.eventAt = -1
}

// takeWaiting hands the engine the watch events already waiting, without
// blocking: what the watch delivered while the engine was busy is newer
// than what it is about to act on.
func (o *observer) takeWaiting(e engine) {
	for {
		select {
		case p, ok := <-o.watch.events:
			o.takeEvent(e, p, ok)
			if !ok {
				return
			}
		default:
			return
		}
	}
}
