package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/leadership-go/leadership/store/open"
)

// procElection measures etcd's concurrency.Election with every participant
// in its own process, as procHandoff and procCrash measure this library:
// the leader child resigns and exits (handoff), or gets SIGKILL (crash).
// The phases hold Resign's own duration (the release) only.
func procElection(ctx context.Context, be *backend, cfg *config) (*electionResult, *phaseResult, error) {
	spec, err := open.Parse(be.url)
	if err != nil {
		return nil, nil, err
	}
	res, ph := &electionResult{}, &phaseResult{}
	if err := procElectionHandoff(ctx, spec, be, cfg, res, ph); err != nil {
		return res, ph, fmt.Errorf("handoff: %w", err)
	}
	if cfg.crashRounds > 0 {
		if err := procElectionCrash(ctx, spec, be, cfg, res); err != nil {
			return res, ph, fmt.Errorf("crash: %w", err)
		}
	}
	return res, ph, nil
}

// procEGroup is an etcd Election in child processes, with a parent client
// that counts the queue.
type procEGroup struct {
	*procGroup
	eg    *egroup
	check *clientv3.Client
}

func startProcEGroup(ctx context.Context, spec *open.Spec, be *backend, cfg *config, phase string) (*procEGroup, error) {
	prefix := cfg.prefix(electionName, phase) + "/"
	g, err := newProcGroup(electionName, childSpec{URL: be.url, Key: prefix, TTL: cfg.ttl, ClientLogs: cfg.clientLogs})
	if err != nil {
		return nil, err
	}
	pg := &procEGroup{procGroup: g, eg: newEGroup(spec, prefix, cfg.ttl, false)}
	if pg.check, _, err = pg.eg.newClient(ctx, false); err != nil {
		return pg, err
	}
	timeout := 3*cfg.ttl + 5*time.Second
	// c1 wins before the others queue, so the queue is c1, c2, c3.
	for i := range 3 {
		if err := pg.addElectionCandidate(ctx, fmt.Sprintf("c%d", i+1), int64(i+1), timeout); err != nil {
			return pg, err
		}
		if i == 0 {
			if _, err := pg.rec.waitFor(ctx, 0, timeout, func(e event) bool { return e.kind == evElected }); err != nil {
				return pg, fmt.Errorf("no first leader: %w", err)
			}
		}
	}
	return pg, nil
}

// addElectionCandidate starts a campaigning child and waits until the
// queue holds want keys.
func (g *procEGroup) addElectionCandidate(ctx context.Context, name string, want int64, timeout time.Duration) error {
	if _, err := g.spawn(ctx, roleElection, name); err != nil {
		return err
	}
	if err := g.eg.waitQueue(ctx, g.check, want, timeout); err != nil {
		return err
	}
	return sleep(ctx, procSettle)
}

func (g *procEGroup) close() error {
	err := g.teardown()
	if g.check != nil {
		err = errors.Join(err, g.check.Close())
	}
	return err
}

func procElectionHandoff(ctx context.Context, spec *open.Spec, be *backend, cfg *config, res *electionResult, ph *phaseResult) (err error) {
	g, err := startProcEGroup(ctx, spec, be, cfg, "handoff")
	if g != nil {
		defer func() { err = errors.Join(err, g.close()) }()
	}
	if err != nil {
		return err
	}
	timeout := 3*cfg.ttl + 5*time.Second
	if _, err := g.spawn(ctx, roleObserver, "observer"); err != nil {
		return err
	}
	lead, err := g.waitStableProc(ctx, timeout)
	if err != nil {
		return err
	}
	seq := 3
	for range cfg.rounds {
		from := g.rec.mark()
		old := g.nodes[lead]
		if err := g.command(old, cmdStop); err != nil {
			return fmt.Errorf("tell %s to resign: %w", old.name, err)
		}
		rel, err := g.eventOf(ctx, from, lead, evRelease, timeout)
		if err != nil {
			return fmt.Errorf("%s did not begin to resign: %w", old.name, err)
		}
		el, err := g.waitElected(ctx, from, lead, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res.Failed++
			return fmt.Errorf("no Campaign returned within %v after Resign", timeout)
		}
		name := g.nodes[el.who].name
		fe, err := g.waitFollower(ctx, from, name, timeout)
		if err != nil {
			return fmt.Errorf("the observer did not name %s: %w", name, err)
		}
		res.Handoff = append(res.Handoff, msf(el.at.Sub(rel.at)))
		res.FollowerAfter = append(res.FollowerAfter, msf(fe.at.Sub(el.at)))
		res.ResignToFollower = append(res.ResignToFollower, msf(fe.at.Sub(rel.at)))
		if r, err := g.eventOf(ctx, from, lead, evReleased, timeout); err == nil {
			ph.Release = append(ph.Release, msf(r.at.Sub(rel.at)))
			ph.Deliver = append(ph.Deliver, msf(el.at.Sub(r.at)))
		}
		if err := g.command(old, cmdExit); err != nil {
			return fmt.Errorf("tell %s to exit: %w", old.name, err)
		}
		if err := g.waitExit(old); err != nil {
			return err
		}
		old.dead = true
		lead = el.who
		seq++
		if err := g.addElectionCandidate(ctx, fmt.Sprintf("c%d", seq), 3, timeout); err != nil {
			return err
		}
	}
	return nil
}

func procElectionCrash(ctx context.Context, spec *open.Spec, be *backend, cfg *config, res *electionResult) (err error) {
	g, err := startProcEGroup(ctx, spec, be, cfg, "crash")
	if g != nil {
		defer func() { err = errors.Join(err, g.close()) }()
	}
	if err != nil {
		return err
	}
	timeout := 3*cfg.ttl + 5*time.Second
	seq := 3
	for range cfg.crashRounds {
		lead, err := g.waitStableProc(ctx, timeout)
		if err != nil {
			return err
		}
		if err := sleep(ctx, 300*time.Millisecond+rand.N(cfg.ttl/3)); err != nil {
			return err
		}
		old := g.nodes[lead]
		from := g.rec.mark()
		t0, err := g.kill(old)
		if err != nil {
			return fmt.Errorf("kill %s: %w", old.name, err)
		}
		el, err := g.waitElected(ctx, from, lead, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			res.CrashFailed++
		} else {
			res.Takeover = append(res.Takeover, msf(el.at.Sub(t0)))
		}
		if err := g.waitExit(old); err != nil {
			return err
		}
		seq++
		if err := g.addElectionCandidate(ctx, fmt.Sprintf("c%d", seq), 3, timeout); err != nil {
			return err
		}
	}
	return nil
}
