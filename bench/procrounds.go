package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/open"
)

// procSettle is the untimed pause after a replacement candidate opened its
// watch, before the next round.
const procSettle = 100 * time.Millisecond

// procLibGroup starts an election of this library in child processes:
// three candidates, c1 to c3, and, if follow, a follower.
func procLibGroup(ctx context.Context, be *backend, cfg *config, phase string, follow bool) (*procGroup, error) {
	g, err := newProcGroup(be.name, childSpec{URL: be.url, Key: cfg.key(be, phase), TTL: cfg.ttl, ClientLogs: cfg.clientLogs})
	if err != nil {
		return nil, err
	}
	for i := range 3 {
		if err := g.addCandidate(ctx, fmt.Sprintf("c%d", i+1)); err != nil {
			return g, err
		}
	}
	if follow {
		if _, err := g.spawn(ctx, roleFollower, "follower"); err != nil {
			return g, err
		}
	}
	return g, nil
}

// addCandidate starts a candidate child and waits until its watch is open
// (its first Watch call returned), then a moment more.
func (g *procGroup) addCandidate(ctx context.Context, name string) error {
	from := g.rec.mark()
	n, err := g.spawn(ctx, roleCandidate, name)
	if err != nil {
		return err
	}
	if _, err := g.rec.waitFor(ctx, from, openTimeout, func(e event) bool {
		return e.who == n.idx && e.kind == evCall && e.name == "Watch<"
	}); err != nil {
		return fmt.Errorf("candidate %s opened no watch: %w", name, err)
	}
	return sleep(ctx, procSettle)
}

// waitStableProc waits until a live candidate leads and, if a follower
// runs, it names that candidate.
func (g *procGroup) waitStableProc(ctx context.Context, timeout time.Duration) (int, error) {
	lead := -1
	err := g.rec.until(ctx, timeout, func(evs []event) bool {
		lead = g.leader(evs)
		if lead < 0 {
			return false
		}
		names := followerNames(evs)
		for _, n := range g.nodes {
			if (n.role == roleFollower || n.role == roleObserver) && names[n.idx] != g.nodes[lead].name {
				return false
			}
		}
		return true
	})
	if err != nil {
		return -1, fmt.Errorf("no stable leader within %v: %w", timeout, err)
	}
	return lead, nil
}

// teardownAndDelete ends every child, then deletes the run's key.
func (g *procGroup) teardownAndDelete(be *backend) error {
	err := g.teardown()
	deleteKey(be, g.base.Key)
	return err
}

// deleteKey removes the run's key once every child has ended.
func deleteKey(be *backend, key string) {
	cleanUp(be, 10*time.Second, "the key "+key, func(ctx context.Context, s store.Store) error { return s.Delete(ctx, key) })
}

// cleanUp opens a client of be and runs del with it, within timeout; an
// error other than a missing key is noted on stderr as what could not be
// deleted. A store that does not open is left as it is.
func cleanUp(be *backend, timeout time.Duration, what string, del func(context.Context, store.Store) error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s, err := open.Store(ctx, be.url)
	if err != nil {
		return
	}
	if err := del(ctx, s); err != nil && !errors.Is(err, store.ErrKeyNotFound) {
		fmt.Fprintf(stderr, "note: %s: could not delete %s: %v\n", be.name, what, err)
	}
	_ = withTimeout("closing the cleanup client", closeTimeout, func() { _ = s.Close() })
}

// procHandoff measures handoffs between candidate processes: the leader
// child is told to Stop (and exits), another waiting child takes over, a
// follower child names it; a fresh candidate replaces the stopped one,
// untimed.
func procHandoff(ctx context.Context, be *backend, cfg *config) (res *handoffResult, ph *phaseResult, err error) {
	g, err := procLibGroup(ctx, be, cfg, "handoff", true)
	if g != nil {
		defer func() { err = errors.Join(err, g.teardownAndDelete(be)) }()
	}
	if err != nil {
		return nil, nil, err
	}
	timeout := 3*cfg.ttl + 5*time.Second
	lead, err := g.waitStableProc(ctx, timeout)
	if err != nil {
		return nil, nil, err
	}
	res, ph = &handoffResult{}, &phaseResult{}
	seq := 3
	for range cfg.rounds {
		from := g.rec.mark()
		old := g.nodes[lead]
		if err := g.command(old, cmdStop); err != nil {
			return res, ph, fmt.Errorf("tell %s to stop: %w", old.name, err)
		}
		rel, err := g.eventOf(ctx, from, lead, evRelease, timeout)
		if err != nil {
			return res, ph, fmt.Errorf("%s did not begin to stop: %w", old.name, err)
		}
		el, err := g.waitElected(ctx, from, lead, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return res, ph, ctx.Err()
			}
			res.Failed++
			_ = g.command(old, cmdExit)
			old.dead = true
			if lead, err = g.waitStableProc(ctx, timeout); err != nil {
				return res, ph, err
			}
			continue
		}
		name := g.nodes[el.who].name
		fe, err := g.waitFollower(ctx, from, name, timeout)
		if err != nil {
			return res, ph, fmt.Errorf("the follower did not name %s: %w", name, err)
		}
		res.Handoff = append(res.Handoff, msf(el.at.Sub(rel.at)))
		res.FollowerAfter = append(res.FollowerAfter, msf(fe.at.Sub(el.at)))
		res.ResignToFollower = append(res.ResignToFollower, msf(fe.at.Sub(rel.at)))
		if err := g.command(old, cmdExit); err != nil {
			return res, ph, fmt.Errorf("tell %s to exit: %w", old.name, err)
		}
		if err := g.waitExit(old); err != nil {
			return res, ph, err
		}
		old.dead = true
		ph.add(cutHandoff(g.rec.snapshot()[from:], lead, el.who, rel, el))
		lead = el.who
		seq++
		if err := g.addCandidate(ctx, fmt.Sprintf("c%d", seq)); err != nil {
			return res, ph, err
		}
		if now := g.leader(g.rec.snapshot()); now != lead {
			res.Unasked++
			if lead, err = g.waitStableProc(ctx, timeout); err != nil {
				return res, ph, err
			}
		}
	}
	res.StoreErrors = countErrors(g.rec.snapshot())
	return res, ph, nil
}

// countErrors counts the store errors the children reported.
func countErrors(evs []event) int64 {
	var n int64
	for _, e := range evs {
		if e.kind == evError {
			n++
		}
	}
	return n
}

// procCrash measures takeovers after the leader's process got SIGKILL, at
// a random point of its renewal cycle; a fresh candidate replaces it.
func procCrash(ctx context.Context, be *backend, cfg *config) (res *crashResult, err error) {
	g, err := procLibGroup(ctx, be, cfg, "crash", false)
	if g != nil {
		defer func() { err = errors.Join(err, g.teardownAndDelete(be)) }()
	}
	if err != nil {
		return nil, err
	}
	timeout := 3*cfg.ttl + 5*time.Second
	res = &crashResult{}
	seq := 3
	for range cfg.crashRounds {
		lead, err := g.waitStableProc(ctx, timeout)
		if err != nil {
			return res, err
		}
		if err := sleep(ctx, 300*time.Millisecond+rand.N(cfg.ttl/3)); err != nil {
			return res, err
		}
		if now := g.leader(g.rec.snapshot()); now != lead {
			return res, fmt.Errorf("leadership moved from %s unasked before the crash", g.nodes[lead].name)
		}
		old := g.nodes[lead]
		from := g.rec.mark()
		t0, err := g.kill(old)
		if err != nil {
			return res, fmt.Errorf("kill %s: %w", old.name, err)
		}
		el, err := g.waitElected(ctx, from, lead, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			res.Failed++
		} else {
			res.Takeover = append(res.Takeover, msf(el.at.Sub(t0)))
		}
		if err := g.waitExit(old); err != nil {
			return res, err
		}
		seq++
		if err := g.addCandidate(ctx, fmt.Sprintf("c%d", seq)); err != nil {
			return res, err
		}
	}
	res.StoreErrors = countErrors(g.rec.snapshot())
	return res, nil
}
