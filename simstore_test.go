package leadership

// The simulator's fault-injecting store: one simStore per participant (its
// own memory handle, its own "connection"), wrapping the calls the engine
// makes (Get, AtomicPut, AtomicDelete, Watch) with faults drawn from the
// participant's own seeded stream while the run's plan is in a fault-heavy
// phase, and FencedPut. Every other store.Store method is forwarded by
// embedding.
//
// Each call is a turn of the scheduler (simclock_test.go) when it reaches
// the store, and again when its reply comes after a fault's wait; a call
// of a paused participant waits for it to resume, and so does its reply.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/memory"
)

// simRates are the chances of each fault while the plan is faulty: per
// store call for the first group, per watch event for the second.
type simRates struct {
	fail, hang, delay, longDelay, lostReply, lateApply float64
	batch                                              float64 // per call: a batch of the caller's handle struck by one fault (simbatch_test.go)
	drop, dup, reorder, watchDelay                     float64
}

// simPlan is the fault plan shared by every wrapper of one run. The driver
// switches it between fault-heavy and calm phases.
type simPlan struct {
	rates         simRates
	maxTTL        time.Duration
	maxWatchDelay time.Duration // no watch event is held longer: the followers' slack

	faulty   atomic.Bool
	inflight atomic.Int64 // hangs, delayed replies and late writes under way

	mu      sync.Mutex
	release chan struct{} // closed to end every hang at once
}

// releaseAll ends every hang under way; later hangs wait for the next call.
func (p *simPlan) releaseAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.release)
	p.release = make(chan struct{})
}

func (p *simPlan) releaseCh() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.release
}

// simFault is what happens to one store call.
type simFault int

const (
	faultNone      simFault = iota
	faultFail               // fails at once with store.ErrNotReachable, not applied
	faultHang               // hangs ignoring ctx until its time or a release, then is applied and answered
	faultDelay              // applied, the reply delayed; lost (ctx's error) if the caller gives up first
	faultLongDelay          // applied, the reply delayed past the TTL ignoring ctx
	faultLostReply          // applied, an error returned
	faultLateApply          // the caller gets ctx's error once it gives up; applied later
)

func (f simFault) String() string {
	return [...]string{"none", "fail", "hang", "delay", "long-delay", "lost-reply", "late-apply"}[f]
}

// simStore is one participant's connection to the simulated store.
type simStore struct {
	*memory.Store
	run   *simRun
	who   *simWitness
	batch *simBatch // the participant's handle; nil for the driver's admin

	mu      sync.Mutex
	rng     *rand.Rand
	stream  uint64
	watches uint64 // watches opened, each with its own stream
	calls   uint64 // calls made: their number orders their turns
}

// newSimStore wraps h for the participant w; stream picks its random stream.
func newSimStore(r *simRun, h *memory.Store, w *simWitness, stream uint64) *simStore {
	return &simStore{Store: h, run: r, who: w, rng: rand.New(rand.NewPCG(r.seed, stream)), stream: stream}
}

// float draws from the participant's stream.
func (s *simStore) float() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64()
}

// between draws a duration in [lo, hi).
func (s *simStore) between(lo, hi time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return randBetween(s.rng, lo, hi)
}

// randBetween draws a duration in [lo, hi) from rng.
func randBetween(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// begin counts a call (and brakes a storm) and draws its fault.
func (s *simStore) begin(op string, write bool) simFault {
	storm := s.run.check.call(s.who)
	if storm {
		time.Sleep(50 * time.Millisecond) // a storm: slow it so that virtual time moves on
	}
	p := s.run.plan
	if !p.faulty.Load() {
		return faultNone
	}
	// Calls woken from a storm's sleep at one instant run in no set order:
	// they stay out of batches, whose draws are shared.
	if s.batch != nil && !storm {
		if f, ok := s.batch.join(s, op, write, p.rates.batch, p.maxTTL); ok {
			return f
		}
	}
	r, x := p.rates, s.float()
	for _, c := range []struct {
		f simFault
		p float64
	}{{faultFail, r.fail}, {faultHang, r.hang}, {faultDelay, r.delay}, {faultLongDelay, r.longDelay},
		{faultLostReply, r.lostReply}, {faultLateApply, r.lateApply}} {
		if x < c.p {
			f := c.f
			if f == faultLateApply && !write {
				f = faultDelay
			}
			s.run.fault(s.who, "%s %s", op, f)
			return f
		}
		x -= c.p
	}
	return faultNone
}

// wait sleeps d ignoring any context, or until the plan releases hangs.
func (s *simStore) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.run.plan.releaseCh():
	}
}

// waitCtx sleeps d and reports false if ctx ended first.
func waitCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// giveUp waits until the caller gives up (ctx ends), at most two TTLs, and
// returns the error the caller then sees.
func (s *simStore) giveUp(ctx context.Context) error {
	if waitCtx(ctx, 2*s.run.plan.maxTTL) {
		return context.DeadlineExceeded
	}
	return ctx.Err()
}

// call runs do, which performs the call on the inner store under the
// context it is given, with the fault drawn for it.
//
// do's keep argument is false for a write applied after the caller gave
// up: its results are no longer anyone's.
func (s *simStore) call(ctx context.Context, op string, write bool, do func(ctx context.Context, keep bool) error) error {
	clk, sub := s.who.clk, simOps[op]
	// Numbered as the call is made, before its first turn: two calls of
	// one operation waiting at one instant (a paused participant's call
	// abandoned and the one it sent next, or two hangs that one release
	// ends) take their turns in the order they were made.
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	clk.step(turnCall, sub, n)
	f := s.begin(op, write)
	if *simTrace {
		s.run.logf("%s: %s call, fault %s", s.who.label, op, f)
	}
	p := s.run.plan
	if f != faultNone && f != faultFail {
		p.inflight.Add(1)
		defer p.inflight.Add(-1)
	}
	ttl := p.maxTTL
	switch f {
	case faultFail:
		return store.ErrNotReachable
	case faultHang:
		s.wait(s.between(ttl/2, 3*ttl))
		s.run.sched.turn(clk.id, turnLate, sub, n) // the store goes on, paused caller or not
		err := do(context.Background(), true)
		clk.step(turnReply, sub, n)
		return err
	case faultDelay:
		err := do(ctx, true)
		if !waitCtx(ctx, s.between(0, ttl/2)) {
			return ctx.Err() // the caller gave up: no one waits for this reply
		}
		clk.step(turnReply, sub, n)
		return err
	case faultLongDelay:
		err := do(ctx, true)
		s.wait(s.between(ttl, 5*ttl/2))
		clk.step(turnReply, sub, n)
		return err
	case faultLostReply:
		_ = do(ctx, true)
		if s.float() < 0.5 {
			return s.giveUp(ctx) // returns once the caller gave up
		}
		return store.ErrNotReachable
	case faultLateApply:
		later := s.between(0, 3*ttl/2) // drawn now: the caller's next call draws from the same stream
		err := s.giveUp(ctx)
		p.inflight.Add(1)
		s.run.bg.Go(func() {
			defer p.inflight.Add(-1)
			s.wait(later)
			s.run.sched.turn(clk.id, turnLate, sub, n)
			_ = do(context.Background(), false)
		})
		return err
	}
	return do(ctx, true)
}

// simOps orders the calls of one participant within one instant.
var simOps = map[string]uint64{"get": 1, "put": 2, "delete": 3, "watch": 4, "fput": 5}

// Get reads key; the checker learns what the caller was shown.
func (s *simStore) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	var (
		pair *store.KVPair
		at   time.Time
	)
	err := s.call(ctx, "get", false, func(c context.Context, _ bool) error {
		var err error
		at = time.Now()
		pair, err = s.Store.Get(c, key, opts)
		return err
	})
	if ctx.Err() == nil && key == simKey { // else the caller has given up and does not see the answer, or it is another key
		switch {
		case err == nil:
			if *simTrace {
				s.run.logf("%s: get read at %s", s.who.label, s.run.at(at))
			}
			s.run.check.shown(s.who, pair.Value, "get")
		case errors.Is(err, store.ErrKeyNotFound):
			s.run.check.missingRead(s.who, at)
		}
	}
	return pair, err
}

// AtomicPut compare-and-swaps; every write the inner store applies is
// recorded with its time.
func (s *simStore) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	var (
		ok   bool
		pair *store.KVPair
	)
	sent := time.Now() // when the engine sent it (before any pause of its own)
	err := s.call(ctx, "put", true, func(c context.Context, keep bool) error {
		applied, stored, err := s.Store.AtomicPut(c, key, value, prev, opts)
		if applied && key == simKey {
			s.run.check.applied(s.who, stored, sent, "engine")
		}
		if keep {
			ok, pair = applied, stored
		}
		return err
	})
	if err == nil && ok && ctx.Err() == nil && key == simKey {
		s.run.check.shown(s.who, pair.Value, "put")
	}
	return ok, pair, err
}

// AtomicDelete deletes if unchanged (only DeleteElection does).
func (s *simStore) AtomicDelete(ctx context.Context, key string, prev *store.KVPair) (bool, error) {
	var ok bool
	err := s.call(ctx, "delete", true, func(c context.Context, keep bool) error {
		deleted, err := s.Store.AtomicDelete(c, key, prev)
		if deleted && key == simKey {
			s.run.check.goBack("delete")
			s.run.logf("%s: deleted the key", s.who.label)
		}
		if keep {
			ok = deleted
		}
		return err
	})
	return ok, err
}

// FencedPut writes key only while guardKey holds guard's version, through
// the faults; the checker learns every fenced write that lands.
func (s *simStore) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	return s.call(ctx, "fput", true, func(c context.Context, _ bool) error {
		err := s.Store.FencedPut(c, key, value, guardKey, guard)
		if err == nil {
			s.run.check.fenced(s.who, string(value))
		}
		return err
	})
}

// Watch opens the inner watch and forwards its events through faults.
func (s *simStore) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	var in <-chan *store.KVPair
	err := s.call(ctx, "watch", false, func(_ context.Context, _ bool) error {
		var err error
		in, err = s.Store.Watch(ctx, key, opts) // the watch lives as long as ctx, whatever the fault
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(chan *store.KVPair)
	s.mu.Lock()
	s.watches++
	n := s.watches
	rng := rand.New(rand.NewPCG(s.run.seed, s.stream<<20|n))
	s.mu.Unlock()
	s.run.bg.Go(func() { s.forward(ctx, in, out, rng, key == simKey, n) })
	return out, nil
}

// simHeld is a watch event waiting for its time.
type simHeld struct {
	due  time.Time
	pair *store.KVPair
}

// forward delivers the inner watch's events to out, dropping, duplicating,
// delaying and reordering them while the plan is faulty; no event is held
// longer than the plan's maxWatchDelay. It closes out when the inner
// channel is closed and drained, or when ctx ends.
// Only the election key's events are shown to the checker (checked).
// Taking an event from the store and offering one to the participant are
// turns of the scheduler (n, the watch's number, orders them), and a
// paused participant is offered nothing.
func (s *simStore) forward(ctx context.Context, in <-chan *store.KVPair, out chan<- *store.KVPair, rng *rand.Rand, checked bool, n uint64) {
	defer close(out)
	var q []simHeld
	for in != nil || len(q) > 0 {
		var (
			send chan<- *store.KVPair
			head *store.KVPair
			wake <-chan time.Time
		)
		if len(q) > 0 {
			if d := time.Until(q[0].due); d <= 0 {
				s.who.clk.step(turnWatch, n, 0)
				send, head = out, q[0].pair
				// What the store queued first, then the participant, if
				// ready: never a random pick between the two (Go's select).
				select {
				case p, ok := <-in:
					if !ok {
						in = nil
					} else {
						q = s.schedule(q, p, rng)
					}
					continue
				default:
				}
				select {
				case send <- head:
					q = q[1:]
					if ctx.Err() == nil && checked {
						s.run.check.shown(s.who, head.Value, "watch")
					}
					continue
				default:
				}
			} else {
				wake = time.After(d)
			}
		}
		select {
		case <-ctx.Done():
			return
		case p, ok := <-in:
			if !ok {
				in = nil
				continue
			}
			s.run.sched.turn(s.who.clk.id, turnWatch, n, 0)
			q = s.schedule(q, p, rng)
		case send <- head:
			q = q[1:]
			if ctx.Err() == nil && checked {
				s.run.check.shown(s.who, head.Value, "watch")
			}
		case <-wake:
		}
	}
}

// schedule queues one inner event under the plan's watch faults.
func (s *simStore) schedule(q []simHeld, p *store.KVPair, rng *rand.Rand) []simHeld {
	now := time.Now()
	last := now
	if len(q) > 0 {
		last = q[len(q)-1].due
	}
	plan := s.run.plan
	if !plan.faulty.Load() {
		return append(q, simHeld{due: last, pair: p}) // in order
	}
	r, x := plan.rates, rng.Float64()
	add := func(due time.Time) {
		i := sort.Search(len(q), func(i int) bool { return q[i].due.After(due) })
		q = append(q, simHeld{})
		copy(q[i+1:], q[i:])
		q[i] = simHeld{due: due, pair: p}
	}
	md := plan.maxWatchDelay
	switch {
	case x < r.drop:
		s.run.fault(s.who, "watch event dropped (%s)", s.run.describe(p))
	case x < r.drop+r.dup:
		s.run.fault(s.who, "watch event duplicated (%s)", s.run.describe(p))
		add(last)
		add(now.Add(randBetween(rng, 0, md)))
	case x < r.drop+r.dup+r.reorder:
		s.run.fault(s.who, "watch event held back for reordering (%s)", s.run.describe(p))
		add(now.Add(randBetween(rng, md/2, md)))
	case x < r.drop+r.dup+r.reorder+r.watchDelay:
		d := randBetween(rng, 0, md)
		s.run.fault(s.who, "watch event delayed %v (%s)", d, s.run.describe(p))
		add(now.Add(d))
	default:
		add(last)
	}
	return q
}

// simRec is a stored value decoded, with its short form for the event
// log. Values are decoded once per run (decoding dominates the cost).
type simRec struct {
	rec  record
	ok   bool // a record of this library
	desc string
}

// decode decodes v through the run's cache.
func (r *simRun) decode(v []byte) *simRec {
	r.decMu.Lock()
	defer r.decMu.Unlock()
	if d, ok := r.decoded[string(v)]; ok {
		return d
	}
	rec, ok := decodeRecord(v)
	d := &simRec{rec: rec, ok: ok, desc: "foreign"}
	if ok {
		d.desc = fmt.Sprintf("g%d t%d s%d", rec.Gen, rec.Term, rec.Seq)
		switch {
		case rec.Ended:
			d.desc += " ended"
		case rec.Free():
			d.desc += " free"
		default:
			d.desc += " " + rec.Leader
		}
	}
	r.decoded[string(v)] = d
	return d
}

// describe is a short form of a stored pair for the event log.
func (r *simRun) describe(p *store.KVPair) string {
	if p == nil || len(p.Value) == 0 {
		return "missing"
	}
	return fmt.Sprintf("%s @%d", r.decode(p.Value).desc, p.LastIndex)
}

// describeValue is a short form of a stored value, or of a missing key (nil).
func (r *simRun) describeValue(v []byte) string {
	if v == nil {
		return "missing"
	}
	return r.decode(v).desc
}
