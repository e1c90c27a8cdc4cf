package leadershiptest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/workpool"
)

// ElectionsBeforeWipe is the number of short elections the
// StoreWipedAfterManyElections subtest runs before it restarts the server
// without its data, to push the store's revision or index well above
// anything the restarted server reaches during the subtest. Zero or less
// skips the subtest.
var ElectionsBeforeWipe = 300

// electionsBefore runs n elections on keys below e.key+"-warm" (not below
// e.key, whose ZooKeeper node would then exist), on one client, 32 at a
// time: each candidate is elected (a write) and stops (a release, another
// write).
func electionsBefore(e *env, n int) {
	e.t.Helper()
	cl := e.client()
	ttl := manyElectionsTTL(e.ttl, 32)
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	start := time.Now()
	workpool.Each(n, 32, func(i int) {
		c := leadership.NewCandidate(cl.Store, fmt.Sprintf("%s-warm/%d", e.key, i), fmt.Sprintf("warm-%d", i), ttl)
		var el <-chan bool
		if err := e.startRetrying(func() (err error) {
			el, _, err = c.RunForElection()
			return err
		}); err != nil {
			fail(fmt.Errorf("election %d: %w", i, err))
			return
		}
		defer func() {
			c.Stop()
			for range el {
			}
		}()
		deadline := time.NewTimer(e.wait)
		defer deadline.Stop()
		for {
			select {
			case v, ok := <-el:
				if !ok {
					fail(fmt.Errorf("election %d: channel closed before a win (Err %v)", i, c.Err()))
					return
				}
				if v {
					return
				}
			case <-deadline.C:
				fail(fmt.Errorf("election %d: no win within %v", i, e.wait))
				return
			}
		}
	})
	if len(errs) > 0 {
		e.t.Fatalf("%d of %d elections before the wipe failed; first: %v", len(errs), n, errs[0])
	}
	e.timing(fmt.Sprintf("%d elections before the wipe", n), time.Since(start))
}

// testStoreWipedAfterManyElections: the server's revision (index) is
// pushed high by many elections, then the server restarts without its
// data, its revision counting again from the start. The candidates elect
// again, with a greater token, and a follower names the new leader and
// keeps naming it while it renews: no watch may resume from a revision the
// new server does not have, nor may its silence hide the renewals.
func testStoreWipedAfterManyElections(e *env) {
	r, ok := e.s.b.(Restarter)
	if !ok {
		e.t.Skipf("backend %s cannot restart its server (no Restarter)", e.s.b.Name())
	}
	if ElectionsBeforeWipe <= 0 {
		e.t.Skip("ElectionsBeforeWipe is 0")
	}
	if n, ok := e.s.b.(*Network); ok && (n.Stop == nil || n.Start == nil) {
		e.t.Skip("no server the suite may restart")
	}
	electionsBefore(e, ElectionsBeforeWipe)

	cs := e.candidates(2)
	x, f, _, term := e.watchedLeader(cs)
	end := watchTermEnd(term)
	lMark := f.leaders.len()

	r.StopServer(e.t)
	down := true
	e.t.Cleanup(func() {
		if down {
			r.StartServer(e.t)
		}
	})
	end.wait(e.t, e.wait, "the leader's term while the store is down")
	f.leaders.find(e.t, e.wait, lMark, "follower stops naming a leader it cannot confirm", func(s string) bool { return s == "" })

	lMark = f.leaders.len()
	r.StartServer(e.t)
	down = false
	started := time.Now()
	// The candidates lived through the loss: their tokens continue above
	// the highest they saw (docs/semantics.md section 7).
	next, nt := e.leaderAfter(cs, term.Token)
	e.timing("a leader is elected, after the wiped store restarted", nt.Began.Sub(started))
	_, v := f.leaders.find(e.t, e.wait, lMark, "follower names the leader after the wipe", func(s string) bool { return s == next.name })
	e.timing("follower names the leader, after the wiped store restarted", v.at.Sub(started))
	history := func() string {
		var obs []string
		for _, o := range f.obs.all() {
			obs = append(obs, fmt.Sprintf("%q term %d at %v", o.v.Leader, o.v.Token, o.at.Sub(started).Round(time.Millisecond)))
		}
		return fmt.Sprintf("observations, from the restart: %v", obs)
	}

	// The first write of the new term may be dated from the follower's
	// last view of the store without it (before the restart, or a read
	// that showed the key missing): until its renewals are seen, the
	// follower may drop it once, as it drops any leader it cannot show
	// renewing. Two TTLs later it names it, and then keeps naming it
	// while it leads the same term: a renewing leader is never dropped.
	ntEnd := watchTermEnd(nt)
	termLasts := func(d time.Duration) (lasted bool) {
		e.t.Helper()
		select {
		case <-ntEnd.done:
			cause := context.Cause(nt.Context())
			if errors.Is(cause, leadership.ErrLeaseExpired) {
				// The leader stepped down on its own clock because the
				// store confirmed no renewal in time (a slow store just
				// after its restart): the safety rule at work, not the
				// follower's fault. The follower check needs a term that
				// lasts, so it ends here.
				e.t.Logf("%s's term %d ended %v after the follower named it: %v (its errors: %v); the follower check stops here", next.name, nt.Token, ntEnd.at.Sub(v.at), cause, next.errs.values())
				return false
			}
			e.t.Fatalf("%s's term %d ended %v after the follower named it: %v; its errors: %v", next.name, nt.Token, ntEnd.at.Sub(v.at), cause, next.errs.values())
		case <-time.After(d):
		}
		return true
	}
	if !termLasts(2 * e.ttl) {
		x.check(e.t)
		return
	}
	if drops := f.leaders.len() - lMark - 1; drops > 0 {
		e.t.Logf("the follower changed its mind %d times in the 2 TTLs after it first named %s (%s)", drops, next.name, history())
	}
	if got := f.Leader(); got != next.name {
		e.t.Fatalf("the follower names %q two TTLs after it first named %s, who leads term %d (%s)", got, next.name, nt.Token, history())
	}
	mark := f.leaders.len()
	named := time.Now()
	if !termLasts(5 * e.ttl) {
		x.check(e.t)
		return
	}
	if later := f.leaders.all()[mark:]; len(later) > 0 {
		var seen []string
		for _, l := range later {
			seen = append(seen, fmt.Sprintf("%q after %v", l.v, l.at.Sub(named).Round(time.Millisecond)))
		}
		e.t.Fatalf("the follower did not keep naming %s, who led term %d throughout: then %v (%s)", next.name, nt.Token, seen, history())
	}
	x.check(e.t)
}
