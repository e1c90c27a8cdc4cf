package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/open"
)

// ecand is one participant of etcd's own concurrency.Election: its own
// client, its own session (lease), and a goroutine that campaigns.
type ecand struct {
	idx    int
	name   string
	cli    *clientv3.Client
	sess   *concurrency.Session
	fwds   []*leadershiptest.Forwarder
	cancel context.CancelFunc
	again  chan struct{}                        // campaign again after a Resign
	cur    atomic.Pointer[concurrency.Election] // the election it won last
	done   chan struct{}                        // its goroutine ended
	gone   atomic.Bool                          // its client vanished
	closed bool
}

// egroup is one concurrency.Election under a prefix of the etcd server.
type egroup struct {
	spec    *open.Spec
	prefix  string
	ttl     int // session TTL, seconds
	forward bool
	rec     *recorder
	cands   []*ecand
	wg      sync.WaitGroup
	errMu   sync.Mutex
	errs    []error
}

func (g *egroup) fail(err error) {
	g.errMu.Lock()
	defer g.errMu.Unlock()
	g.errs = append(g.errs, err)
}

// newClient opens an etcd client (through forwarders if the group says so)
// and checks it with a round trip.
func (g *egroup) newClient(ctx context.Context, forward bool) (*clientv3.Client, []*leadershiptest.Forwarder, error) {
	eps := g.spec.Endpoints
	var fwds []*leadershiptest.Forwarder
	if forward {
		eps = nil
		for _, ep := range g.spec.Endpoints {
			f, err := leadershiptest.NewForwarder(ep)
			if err != nil {
				closeForwarders(fwds)
				return nil, nil, err
			}
			fwds = append(fwds, f)
			eps = append(eps, f.Addr())
		}
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: eps, DialTimeout: 5 * time.Second,
		Username: g.spec.Username, Password: g.spec.Password,
		Logger: zap.NewNop(),
	})
	if err != nil {
		closeForwarders(fwds)
		return nil, nil, err
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if _, err := cli.Get(octx, g.prefix+"probe"); err != nil {
		_ = cli.Close()
		closeForwarders(fwds)
		return nil, nil, fmt.Errorf("etcd round trip: %w", err)
	}
	return cli, fwds, nil
}

// addCandidate starts a participant that campaigns at once, and again after
// each Resign when told to.
func (g *egroup) addCandidate(ctx context.Context, name string) error {
	cli, fwds, err := g.newClient(ctx, g.forward)
	if err != nil {
		return err
	}
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(g.ttl))
	if err != nil {
		_ = cli.Close()
		closeForwarders(fwds)
		return fmt.Errorf("etcd session: %w", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	c := &ecand{idx: len(g.cands), name: name, cli: cli, sess: sess, fwds: fwds, cancel: cancel,
		again: make(chan struct{}, 1), done: make(chan struct{})}
	g.cands = append(g.cands, c)
	g.wg.Go(func() {
		defer close(c.done)
		for {
			el := concurrency.NewElection(sess, g.prefix)
			if err := el.Campaign(cctx, name); err != nil {
				if cctx.Err() == nil && !c.gone.Load() {
					g.fail(fmt.Errorf("campaign of %s: %w", name, err))
				}
				return
			}
			now := time.Now()
			c.cur.Store(el)
			g.rec.add(event{at: now, kind: evElected, who: c.idx, val: true})
			select {
			case <-c.again:
			case <-cctx.Done():
				return
			}
		}
	})
	return nil
}

// observer is a client observing the election.
type observer struct {
	cli    *clientv3.Client
	sess   *concurrency.Session
	cancel context.CancelFunc
	done   chan struct{}
}

func (g *egroup) addObserver(ctx context.Context) (*observer, error) {
	cli, _, err := g.newClient(ctx, false)
	if err != nil {
		return nil, err
	}
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(g.ttl))
	if err != nil {
		_ = cli.Close()
		return nil, err
	}
	octx, cancel := context.WithCancel(ctx)
	o := &observer{cli: cli, sess: sess, cancel: cancel, done: make(chan struct{})}
	ch := concurrency.NewElection(sess, g.prefix).Observe(octx)
	go func() {
		defer close(o.done)
		for resp := range ch {
			now := time.Now()
			if len(resp.Kvs) > 0 {
				g.rec.add(event{at: now, kind: evFollower, who: -1, name: string(resp.Kvs[0].Value)})
			}
		}
	}()
	return o, nil
}

func (o *observer) close() error {
	o.cancel()
	<-o.done
	return errors.Join(o.sess.Close(), o.cli.Close())
}

// lastLeader returns the candidate whose Campaign returned last, or -1.
func lastLeader(evs []event) int {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].kind == evElected {
			return evs[i].who
		}
	}
	return -1
}

// retire ends a participant: its goroutine, its session (orphaned when its
// client vanished, so that nothing revokes the lease), its client.
func (g *egroup) retire(c *ecand) error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.cancel()
	<-c.done
	var err error
	if c.gone.Load() {
		c.sess.Orphan()
	} else {
		err = withTimeout("closing an etcd session", closeTimeout, func() { _ = c.sess.Close() })
	}
	err = errors.Join(err, withTimeout("closing an etcd client", closeTimeout, func() { _ = c.cli.Close() }))
	closeForwarders(c.fwds)
	return err
}

func (g *egroup) teardown() error {
	var errs []error
	for _, c := range g.cands {
		errs = append(errs, g.retire(c))
	}
	errs = append(errs, withTimeout("the etcd campaign goroutines", closeTimeout, g.wg.Wait))
	g.errMu.Lock()
	errs = append(errs, g.errs...)
	g.errMu.Unlock()
	return errors.Join(errs...)
}

// electionResult holds the measurements of etcd's concurrency.Election.
type electionResult struct {
	Handoff          []float64 `json:"handoff_ms"`               // Resign -> the next Campaign returns
	FollowerAfter    []float64 `json:"follower_after_leader_ms"` // Campaign returned -> Observe delivers it
	ResignToFollower []float64 `json:"resign_to_follower_ms"`    // Resign -> Observe delivers the new leader
	Takeover         []float64 `json:"takeover_ms"`              // vanish -> the next Campaign returns
	Failed           int       `json:"failed_rounds"`
	CrashFailed      int       `json:"failed_crash_rounds"`
}

func newEGroup(spec *open.Spec, prefix string, ttl time.Duration, forward bool) *egroup {
	secs := int((ttl + time.Second - 1) / time.Second)
	return &egroup{spec: spec, prefix: prefix, ttl: max(1, secs), forward: forward, rec: newRecorder()}
}

// runElection measures etcd's concurrency.Election: handoffs with an
// observer, then crash takeovers with every client behind a forwarder.
func runElection(ctx context.Context, be *backend, cfg *config) (*electionResult, error) {
	spec, err := open.Parse(be.url)
	if err != nil {
		return nil, err
	}
	res := &electionResult{}
	timeout := 3*cfg.ttl + 5*time.Second
	if err := electionHandoff(ctx, spec, cfg, res, timeout); err != nil {
		return res, fmt.Errorf("handoff: %w", err)
	}
	if cfg.crashRounds == 0 {
		return res, nil
	}
	if err := electionCrash(ctx, spec, cfg, res, timeout); err != nil {
		return res, fmt.Errorf("crash: %w", err)
	}
	return res, nil
}

func electionHandoff(ctx context.Context, spec *open.Spec, cfg *config, res *electionResult, timeout time.Duration) (err error) {
	g := newEGroup(spec, cfg.prefix("etcd-election", "handoff")+"/", cfg.ttl, false)
	var obs *observer
	defer func() {
		if obs != nil {
			err = errors.Join(err, obs.close())
		}
		err = errors.Join(err, g.teardown())
	}()
	// The first candidate wins before the others queue, so the order of
	// the queue is c1, c2, c3.
	for i := range 3 {
		if err := g.addCandidate(ctx, fmt.Sprintf("c%d", i+1)); err != nil {
			return err
		}
		if i == 0 {
			if _, err := g.rec.waitFor(ctx, 0, timeout, func(e event) bool { return e.kind == evElected }); err != nil {
				return fmt.Errorf("no first leader: %w", err)
			}
		}
	}
	if obs, err = g.addObserver(ctx); err != nil {
		return err
	}
	if err := g.waitQueue(ctx, obs.cli, 3, timeout); err != nil {
		return err
	}
	lead := lastLeader(g.rec.snapshot())
	if _, err := g.rec.waitFor(ctx, 0, timeout, func(e event) bool { return e.kind == evFollower && e.name == g.cands[lead].name }); err != nil {
		return fmt.Errorf("the observer did not name the first leader: %w", err)
	}
	for range cfg.rounds {
		from := g.rec.mark()
		el := g.cands[lead].cur.Load()
		rctx, cancel := context.WithTimeout(ctx, timeout)
		t0 := time.Now()
		err := el.Resign(rctx)
		cancel()
		if err != nil {
			return fmt.Errorf("resign: %w", err)
		}
		e, err := g.rec.waitFor(ctx, from, timeout, func(e event) bool { return e.kind == evElected && e.who != lead })
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res.Failed++
			return fmt.Errorf("no Campaign returned within %v after Resign", timeout)
		}
		name := g.cands[e.who].name
		fe, err := g.rec.waitFor(ctx, from, timeout, func(e event) bool { return e.kind == evFollower && e.name == name })
		if err != nil {
			return fmt.Errorf("the observer did not name %s within %v", name, timeout)
		}
		res.Handoff = append(res.Handoff, msf(e.at.Sub(t0)))
		res.FollowerAfter = append(res.FollowerAfter, msf(fe.at.Sub(e.at)))
		res.ResignToFollower = append(res.ResignToFollower, msf(fe.at.Sub(t0)))
		// Untimed: the resigned candidate campaigns again, at the back of
		// the queue.
		g.cands[lead].again <- struct{}{}
		lead = e.who
		if err := g.waitQueue(ctx, obs.cli, 3, timeout); err != nil {
			return err
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// waitQueue waits until n candidates have their key under the prefix.
func (g *egroup) waitQueue(ctx context.Context, cli *clientv3.Client, n int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := cli.Get(rctx, g.prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
		cancel()
		if err != nil {
			return err
		}
		if resp.Count >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d candidates queued within %v", resp.Count, n, timeout)
		}
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

func electionCrash(ctx context.Context, spec *open.Spec, cfg *config, res *electionResult, timeout time.Duration) (err error) {
	g := newEGroup(spec, cfg.prefix("etcd-election", "crash")+"/", cfg.ttl, true)
	defer func() { err = errors.Join(err, g.teardown()) }()
	seq := 0
	add := func() error {
		seq++
		return g.addCandidate(ctx, fmt.Sprintf("c%d", seq))
	}
	for range 3 {
		if err := add(); err != nil {
			return err
		}
	}
	check, _, err := g.newClient(ctx, false)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, check.Close()) }()
	renew := cfg.ttl / 3
	for range cfg.crashRounds {
		if err := g.waitQueue(ctx, check, 3, timeout); err != nil {
			return err
		}
		if err := g.rec.until(ctx, timeout, func(evs []event) bool {
			l := lastLeader(evs)
			return l >= 0 && !g.cands[l].gone.Load()
		}); err != nil {
			return fmt.Errorf("no leader: %w", err)
		}
		if err := sleep(ctx, 300*time.Millisecond+rand.N(renew)); err != nil {
			return err
		}
		lead := lastLeader(g.rec.snapshot())
		old := g.cands[lead]
		from := g.rec.mark()
		t0 := time.Now()
		old.gone.Store(true)
		closeForwarders(old.fwds)
		e, err := g.rec.waitFor(ctx, from, timeout, func(e event) bool { return e.kind == evElected && e.who != lead })
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res.CrashFailed++
		} else {
			res.Takeover = append(res.Takeover, msf(e.at.Sub(t0)))
		}
		if err := g.retire(old); err != nil {
			return err
		}
		if err := add(); err != nil {
			return err
		}
	}
	return nil
}
