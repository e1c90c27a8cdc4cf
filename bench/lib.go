package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/open"
)

// openTimeout bounds the opening of one client.
const openTimeout = 15 * time.Second

// closeTimeout bounds stopping a candidate or closing a client.
const closeTimeout = 20 * time.Second

// member is one participant of an election group, on its own client.
type member struct {
	idx    int
	name   string
	client store.Store
	count  *counting // nil unless the group counts
	fwds   []*leadershiptest.Forwarder
	cand   *leadership.Candidate // nil for a follower
	fol    *leadership.Follower  // nil for a candidate
	gone   bool                  // its client vanished
	closed bool                  // its client was closed
}

// group is one election of this library on one backend: candidates and
// followers, each on its own client, and the goroutines that record what
// their channels deliver.
type group struct {
	be      *backend
	key     string
	ttl     time.Duration
	opts    []leadership.Option
	forward bool // open every client through its own forwarder
	count   bool // wrap every client in a counting store
	rec     *recorder
	members []*member
	readers sync.WaitGroup
	errs    atomic.Int64 // store errors reported on the error channels
	lastErr atomic.Pointer[string]
}

func newGroup(be *backend, key string, ttl time.Duration, forward, count bool, opts ...leadership.Option) *group {
	return &group{be: be, key: key, ttl: ttl, opts: opts, forward: forward, count: count, rec: newRecorder()}
}

// openClient opens a new client of the group's backend.
func (g *group) openClient(ctx context.Context) (store.Store, []*leadershiptest.Forwarder, error) {
	url := g.be.url
	var fwds []*leadershiptest.Forwarder
	if g.forward && g.be.scheme != "memory" {
		var err error
		var done func()
		if url, fwds, done, err = forwardURL(url); err != nil {
			return nil, nil, err
		}
		defer done()
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	s, err := open.Store(octx, url)
	if err != nil {
		closeForwarders(fwds)
		return nil, nil, fmt.Errorf("open a client: %w", err)
	}
	return s, fwds, nil
}

func (g *group) newMember(ctx context.Context, name string) (*member, error) {
	s, fwds, err := g.openClient(ctx)
	if err != nil {
		return nil, err
	}
	m := &member{idx: len(g.members), name: name, client: s, fwds: fwds}
	if g.count {
		m.count = newCounting(s)
		m.client = m.count
	}
	return m, nil
}

// addCandidate starts a candidate named name on a client of its own.
func (g *group) addCandidate(ctx context.Context, name string) (*member, error) {
	m, err := g.newMember(ctx, name)
	if err != nil {
		return nil, err
	}
	m.cand = leadership.NewCandidate(m.client, g.key, name, g.ttl, g.opts...)
	elected, errs, err := m.cand.RunForElection()
	context.AfterFunc(ctx, m.cand.Stop)
	if err != nil {
		g.closeClient(m)
		return nil, fmt.Errorf("start candidate %s: %w", name, err)
	}
	g.members = append(g.members, m)
	g.readers.Add(2)
	go g.readElected(m, elected)
	go g.readErrors(errs)
	return m, nil
}

// addFollower starts a follower on a client of its own.
func (g *group) addFollower(ctx context.Context, name string) (*member, error) {
	m, err := g.newMember(ctx, name)
	if err != nil {
		return nil, err
	}
	m.fol = leadership.NewFollower(m.client, g.key)
	leaders, errs, err := m.fol.FollowElection()
	context.AfterFunc(ctx, m.fol.Stop)
	if err != nil {
		g.closeClient(m)
		return nil, fmt.Errorf("start follower: %w", err)
	}
	g.members = append(g.members, m)
	g.readers.Add(2)
	go func() {
		defer g.readers.Done()
		for name := range leaders {
			g.rec.add(event{at: time.Now(), kind: evFollower, who: m.idx, name: name})
		}
	}()
	go g.readErrors(errs)
	return m, nil
}

// readElected records every value of a candidate's elected channel and,
// for each term, the moment its context ends.
func (g *group) readElected(m *member, elected <-chan bool) {
	defer g.readers.Done()
	for v := range elected {
		now := time.Now()
		var token uint64
		if v {
			if t, ok := m.cand.CurrentTerm(); ok {
				token = t.Token
				g.readers.Add(1)
				go func() {
					defer g.readers.Done()
					<-t.Context().Done()
					g.rec.add(event{at: time.Now(), kind: evStepDown, who: m.idx, token: t.Token})
				}()
			}
		}
		g.rec.add(event{at: now, kind: evElected, who: m.idx, val: v, token: token})
	}
}

func (g *group) readErrors(errs <-chan error) {
	defer g.readers.Done()
	for err := range errs {
		g.errs.Add(1)
		s := err.Error()
		g.lastErr.Store(&s)
	}
}

// leaderIn returns the candidate whose elected channel last said true,
// among those whose client has not vanished, or -1.
func (g *group) leaderIn(evs []event) int {
	return electedLeader(evs, func(who int) bool { return !g.members[who].gone })
}

// electedLeader returns the candidate whose last elected event said true,
// among those live says are live, or -1.
func electedLeader(evs []event, live func(who int) bool) int {
	last := map[int]bool{}
	for _, e := range evs {
		if e.kind == evElected {
			last[e.who] = e.val
		}
	}
	for who, v := range last {
		if v && live(who) {
			return who
		}
	}
	return -1
}

// followerNames returns the last name each follower reported.
func followerNames(evs []event) map[int]string {
	names := map[int]string{}
	for _, e := range evs {
		if e.kind == evFollower {
			names[e.who] = e.name
		}
	}
	return names
}

// startElection starts three candidates, c1 to c3, and a follower, each on
// a client of its own, and waits until one leads and the follower names
// it; it returns that candidate.
func (g *group) startElection(ctx context.Context) (int, error) {
	for i := range 3 {
		if _, err := g.addCandidate(ctx, fmt.Sprintf("c%d", i+1)); err != nil {
			return -1, err
		}
	}
	if _, err := g.addFollower(ctx, "follower"); err != nil {
		return -1, err
	}
	return g.waitStable(ctx, g.roundTimeout())
}

// waitNewLeader waits up to a round's timeout for a candidate other than
// lead to be elected after the recorder's mark from, and returns that
// election. A round without one gives elected false; only the end of ctx
// is an error.
func (g *group) waitNewLeader(ctx context.Context, from, lead int) (el event, elected bool, err error) {
	el, err = g.rec.waitFor(ctx, from, g.roundTimeout(), func(e event) bool {
		return e.kind == evElected && e.val && e.who != lead
	})
	if err != nil {
		return event{}, false, ctx.Err()
	}
	return el, true, nil
}

// waitStable waits until a candidate leads and every follower names it,
// and returns that candidate.
func (g *group) waitStable(ctx context.Context, timeout time.Duration) (int, error) {
	lead := -1
	err := g.rec.until(ctx, timeout, func(evs []event) bool {
		lead = g.leaderIn(evs)
		if lead < 0 {
			return false
		}
		names := followerNames(evs)
		for _, m := range g.members {
			if m.fol != nil && names[m.idx] != g.members[lead].name {
				return false
			}
		}
		return true
	})
	if err != nil {
		return -1, fmt.Errorf("no stable leader (every follower naming it) within %v: %w", timeout, err)
	}
	return lead, nil
}

// vanish makes a member's client disappear: its forwarders close, so its
// connections are reset and it cannot reconnect (memory: the handle is
// closed).
func (g *group) vanish(m *member) {
	m.gone = true
	if len(m.fwds) > 0 {
		closeForwarders(m.fwds)
		return
	}
	_ = m.client.Close()
	m.closed = true
}

// closeClient closes a member's client and forwarders.
func (g *group) closeClient(m *member) error {
	var err error
	if !m.closed {
		m.closed = true
		err = withTimeout("closing the "+g.be.name+" client of "+m.name, closeTimeout, func() { _ = m.client.Close() })
	}
	closeForwarders(m.fwds)
	if m.count != nil {
		if e := withTimeout("the watch relays of "+m.name, closeTimeout, m.count.relays.Wait); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// stopMember stops a member's candidate or follower, then closes its
// client.
func (g *group) stopMember(m *member) error {
	var errs []error
	if m.cand != nil {
		errs = append(errs, withTimeout("stopping candidate "+m.name, closeTimeout, m.cand.Stop))
	}
	if m.fol != nil {
		errs = append(errs, withTimeout("stopping follower "+m.name, closeTimeout, m.fol.Stop))
	}
	errs = append(errs, g.closeClient(m))
	return errors.Join(errs...)
}

// teardown stops everything of the group, deletes the election's key and
// waits for the reader goroutines.
func (g *group) teardown() error {
	var errs []error
	var live *member
	for _, m := range g.members {
		if m.cand != nil {
			errs = append(errs, withTimeout("stopping candidate "+m.name, closeTimeout, m.cand.Stop))
		}
		if m.fol != nil {
			errs = append(errs, withTimeout("stopping follower "+m.name, closeTimeout, m.fol.Stop))
		}
		if live == nil && !m.gone && !m.closed {
			live = m
		}
	}
	if live != nil {
		// Every participant has stopped: the run's key goes with a plain
		// Delete (DeleteElection would wait out the last leader's TTL).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := live.client.Delete(ctx, g.key); err != nil && !errors.Is(err, store.ErrKeyNotFound) {
			fmt.Fprintf(stderr, "note: %s: could not delete the key %s: %v\n", g.be.name, g.key, err)
		}
		cancel()
	}
	for _, m := range g.members {
		errs = append(errs, g.closeClient(m))
	}
	errs = append(errs, withTimeout("the channel readers of "+g.be.name, closeTimeout, g.readers.Wait))
	return errors.Join(errs...)
}

// roundTimeout bounds the wait for one handoff or takeover.
func (g *group) roundTimeout() time.Duration { return 3*g.ttl + 5*time.Second }

// handoffResult holds the handoff rounds of one backend, in milliseconds.
type handoffResult struct {
	Handoff          []float64 `json:"handoff_ms"`                 // Resign -> another candidate's elected=true
	FollowerAfter    []float64 `json:"follower_after_leader_ms"`   // that elected=true -> the follower names it (negative: the follower was first)
	ResignToFollower []float64 `json:"resign_to_follower_ms"`      // Resign -> the follower names the new leader
	Failed           int       `json:"failed_rounds"`              // rounds with no handoff within the round timeout
	Unasked          int       `json:"unasked_leadership_changes"` // leader changes between rounds that nobody asked for
	StoreErrors      int64     `json:"store_errors"`
}

// runHandoff measures rounds resign handoffs between three candidates, with
// a follower, each on its own client.
func runHandoff(ctx context.Context, be *backend, cfg *config) (res *handoffResult, err error) {
	holdoff := cfg.holdoff
	if holdoff == 0 {
		holdoff = -1 // Timings: a zero field takes the default, a negative one asks for none
	}
	g := newGroup(be, cfg.key(be, "handoff"), cfg.ttl, false, false, leadership.WithTimings(leadership.Timings{ResignHoldoff: holdoff}))
	defer func() { err = errors.Join(err, g.teardown()) }()
	lead, err := g.startElection(ctx)
	if err != nil {
		return nil, err
	}
	if err := sleep(ctx, cfg.holdoff+100*time.Millisecond); err != nil {
		return nil, err
	}
	res = &handoffResult{}
	for range cfg.rounds {
		from := g.rec.mark()
		t0 := time.Now()
		g.members[lead].cand.Resign()
		el, elected, err := g.waitNewLeader(ctx, from, lead)
		if err != nil {
			return nil, err
		}
		if !elected {
			res.Failed++
			if lead, err = g.waitStable(ctx, g.roundTimeout()); err != nil {
				return res, err
			}
			continue
		}
		name := g.members[el.who].name
		fe, err := g.rec.waitFor(ctx, from, g.roundTimeout(), func(e event) bool {
			return e.kind == evFollower && e.name == name
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return res, fmt.Errorf("the follower did not name the new leader %s within %v", name, g.roundTimeout())
		}
		res.Handoff = append(res.Handoff, msf(el.at.Sub(t0)))
		res.FollowerAfter = append(res.FollowerAfter, msf(fe.at.Sub(el.at)))
		res.ResignToFollower = append(res.ResignToFollower, msf(fe.at.Sub(t0)))
		lead = el.who
		// Untimed: the resigned candidate's holdoff lapses and it waits
		// again, so the next round is a handoff to a waiting candidate.
		if err := sleep(ctx, cfg.holdoff+100*time.Millisecond); err != nil {
			return nil, err
		}
		if now := g.leaderIn(g.rec.snapshot()); now != lead {
			res.Unasked++
			if lead, err = g.waitStable(ctx, g.roundTimeout()); err != nil {
				return res, err
			}
		}
	}
	res.StoreErrors = g.errs.Load()
	return res, nil
}

// crashResult holds the crash rounds of one backend, in milliseconds.
type crashResult struct {
	Takeover    []float64 `json:"takeover_ms"`                  // vanish -> another candidate's elected=true
	StepDown    []float64 `json:"old_leader_step_down_ms"`      // vanish -> the vanished leader's term context ended
	Margin      []float64 `json:"step_down_before_takeover_ms"` // old leader's step-down -> successor elected (must be > 0)
	Failed      int       `json:"failed_rounds"`
	StoreErrors int64     `json:"store_errors"`
}

// runCrash measures rounds takeovers after the leader's client vanished.
// Three candidates run, each on its own client through its own forwarder;
// the vanished one is replaced by a fresh candidate after each round.
func runCrash(ctx context.Context, be *backend, cfg *config) (res *crashResult, err error) {
	g := newGroup(be, cfg.key(be, "crash"), cfg.ttl, true, false)
	defer func() { err = errors.Join(err, g.teardown()) }()
	seq := 0
	add := func() error {
		seq++
		_, err := g.addCandidate(ctx, fmt.Sprintf("c%d", seq))
		return err
	}
	for range 3 {
		if err := add(); err != nil {
			return nil, err
		}
	}
	res = &crashResult{}
	renew := g.ttl / 3
	for range cfg.crashRounds {
		lead, err := g.waitStable(ctx, g.roundTimeout())
		if err != nil {
			return res, err
		}
		// Let the waiters settle, and vanish at a random point of the
		// leader's renewal cycle.
		if err := sleep(ctx, 300*time.Millisecond+rand.N(renew)); err != nil {
			return nil, err
		}
		if now := g.leaderIn(g.rec.snapshot()); now != lead {
			return res, fmt.Errorf("leadership moved from %s unasked before the crash", g.members[lead].name)
		}
		old := g.members[lead]
		from := g.rec.mark()
		t0 := time.Now()
		g.vanish(old)
		el, elected, err := g.waitNewLeader(ctx, from, lead)
		if err != nil {
			return nil, err
		}
		if !elected {
			res.Failed++
		} else {
			res.Takeover = append(res.Takeover, msf(el.at.Sub(t0)))
			// The vanished leader's own step-down, at its deadline.
			if sd, err := g.rec.waitFor(ctx, from, g.roundTimeout(), func(e event) bool {
				return e.kind == evStepDown && e.who == lead
			}); err == nil {
				res.StepDown = append(res.StepDown, msf(sd.at.Sub(t0)))
				res.Margin = append(res.Margin, msf(el.at.Sub(sd.at)))
			}
		}
		if err := g.stopMember(old); err != nil {
			return res, err
		}
		if err := add(); err != nil {
			return res, err
		}
	}
	res.StoreErrors = g.errs.Load()
	return res, nil
}

// idleRun is one idle election being counted.
type idleRun struct {
	g      *group
	ttl    time.Duration
	leader int
	before []countSnapshot
}

// idleResult holds what an idle election cost over the window.
type idleResult struct {
	TTLSeconds    float64           `json:"ttl_s"`
	WindowSeconds float64           `json:"window_s"`
	PerMinute     float64           `json:"requests_per_min"`
	EventsPerMin  float64           `json:"watch_events_per_min"`
	Participants  []idleParticipant `json:"participants"`
	ByMethod      map[string]int64  `json:"requests_by_method"`
	LeaderChanged bool              `json:"leader_changed"`
	StoreErrors   int64             `json:"store_errors"`
}

type idleParticipant struct {
	Role         string           `json:"role"` // leader, waiting, follower
	Name         string           `json:"name"`
	Requests     int64            `json:"requests"`
	PerMinute    float64          `json:"requests_per_min"`
	Events       int64            `json:"watch_events"`
	EventsPerMin float64          `json:"watch_events_per_min"`
	ByMethod     map[string]int64 `json:"requests_by_method"`
}

// startIdle starts an idle election (three candidates and a follower, each
// on its own counted client) and waits until it is settled.
func startIdle(ctx context.Context, be *backend, cfg *config, ttl time.Duration) (*idleRun, error) {
	g := newGroup(be, cfg.key(be, fmt.Sprintf("idle-%v", ttl)), ttl, false, true)
	r := &idleRun{g: g, ttl: ttl}
	lead, err := g.startElection(ctx)
	if err != nil {
		return r, err
	}
	r.leader = lead
	return r, nil
}

// begin takes the counters at the start of the window.
func (r *idleRun) begin() {
	r.leader = r.g.leaderIn(r.g.rec.snapshot())
	r.before = nil
	for _, m := range r.g.members {
		r.before = append(r.before, m.count.snapshot())
	}
}

// end takes the counters at the end of the window and computes the rates.
func (r *idleRun) end(window time.Duration) *idleResult {
	perMin := func(n int64) float64 { return float64(n) * float64(time.Minute) / float64(window) }
	res := &idleResult{TTLSeconds: r.ttl.Seconds(), WindowSeconds: window.Seconds(), ByMethod: map[string]int64{}}
	var total, events int64
	for i, m := range r.g.members {
		d := m.count.snapshot().sub(r.before[i])
		role := "waiting"
		switch {
		case m.fol != nil:
			role = "follower"
		case i == r.leader:
			role = "leader"
		}
		p := idleParticipant{Role: role, Name: m.name, Requests: d.total(), PerMinute: perMin(d.total()),
			Events: d.events, EventsPerMin: perMin(d.events), ByMethod: d.byMethod()}
		for k, v := range p.ByMethod {
			res.ByMethod[k] += v
		}
		total += d.total()
		events += d.events
		res.Participants = append(res.Participants, p)
	}
	res.PerMinute = perMin(total)
	res.EventsPerMin = perMin(events)
	res.LeaderChanged = r.g.leaderIn(r.g.rec.snapshot()) != r.leader
	res.StoreErrors = r.g.errs.Load()
	return res
}
