package demo

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// times are the measured results shown in the summary.
type times struct {
	first, firstFollower     time.Duration // start -> first elected, start -> follower named it
	handoff, handoffFollower time.Duration // Resign -> next elected, Resign -> follower named it
	stepDown, takeover       time.Duration // vanish -> dead leader's term ended, vanish -> successor elected
	takeoverFollower         time.Duration // vanish -> follower named the successor
	takeoverProxy            time.Duration // vanish -> the successor answered through the proxy
	vanishAnswers            string        // what requests got during the vanish, such as "503 x2, node-2 x1"
	stop                     time.Duration // time to stop everything
}

// await waits for the first event from index from on that matches. If
// none comes before the demo's deadline, it shows the events so far and
// returns a *MissingEventError saying what is missing.
func (d *demo) await(ctx context.Context, from int, what string, match func(event) bool) (event, int, error) {
	e, i, err := d.rec.waitFor(ctx, from, match)
	if err != nil {
		d.flush()
		return e, i, &MissingEventError{What: what, Limit: d.limit, Err: err}
	}
	return e, i, nil
}

// electedMatch matches a candidate's elected=true, except from skip.
func electedMatch(skip string) func(event) bool {
	return func(e event) bool { return e.kind == evElected && e.node != skip }
}

// followerMatch matches the follower reporting leader.
func followerMatch(leader string) func(event) bool {
	return func(e event) bool { return e.kind == evFollower && e.leader == leader }
}

// phaseElection (phase 1) waits for the first leader and for the follower
// to name it, shows every candidate's IsLeader, and sends requests through
// the proxy. It returns the winner's event.
func (d *demo) phaseElection(ctx context.Context, t *times) (event, error) {
	d.printf("\nPhase 1: first election\n")
	won, _, err := d.await(ctx, 0, "a first leader", electedMatch(""))
	if err != nil {
		return won, err
	}
	seen, _, err := d.await(ctx, 0, "the follower naming "+won.node, followerMatch(won.node))
	if err != nil {
		return won, err
	}
	d.flush()
	var views []string
	leaders := 0
	for _, n := range d.nodes {
		is := n.cand.IsLeader()
		if is {
			leaders++
		}
		views = append(views, fmt.Sprintf("%s=%v", n.name, is))
	}
	d.printf("  IsLeader now: %s\n", strings.Join(views, " "))
	if leaders > 1 {
		return won, violationf("%d candidates report IsLeader at once", leaders)
	}
	t.first, t.firstFollower = won.at, seen.at
	d.printf("  => %s won %s after the start; the follower named it at %s\n", won.node, ms(won.at), ms(seen.at))
	return won, d.viaProxy(ctx, 3, won.node)
}

// phaseResign (phase 2) makes the leader resign and measures the handoff.
// It returns the next leader's event.
func (d *demo) phaseResign(ctx context.Context, leader event, t *times) (event, error) {
	d.printf("\nPhase 2: %s resigns\n", leader.node)
	mark := d.rec.mark()
	call := d.note("%s calls Resign()", leader.node)
	d.node(leader.node).cand.Resign()
	next, _, err := d.await(ctx, mark, "a new leader after the resign", electedMatch(""))
	if err != nil {
		return next, err
	}
	seen, _, err := d.await(ctx, mark, "the follower naming "+next.node, followerMatch(next.node))
	if err != nil {
		return next, err
	}
	d.flush()
	if next.token <= leader.token {
		return next, violationf("fencing token did not increase: %d after %d", next.token, leader.token)
	}
	t.handoff, t.handoffFollower = next.at-call.at, seen.at-call.at
	d.printf("  => handoff %s from Resign() to %s's elected=true; token %d > %d: OK\n", ms(t.handoff), next.node, next.token, leader.token)
	d.printf("     the follower named %s %s after the Resign() call\n", next.node, ms(t.handoffFollower))
	return next, d.viaProxy(ctx, 3, next.node)
}

// phaseVanish (phase 3) closes the leader's store handle and HTTP server
// (its candidate is not stopped), measures its step-down and the takeover,
// and checks that the one came before the other.
func (d *demo) phaseVanish(ctx context.Context, leader event, t *times) error {
	d.printf("\nPhase 3: %s vanishes (its store client and HTTP server are closed; its candidate is not stopped)\n", leader.node)
	dead := d.node(leader.node)
	mark := d.rec.mark()
	gone := d.note("%s's client and server are closed: its lease is no longer renewed", dead.name)
	_ = dead.handle.Close()
	_ = dead.srv.Close()
	dead.vanished = true
	counts, order := map[string]int{}, []string{}
	d.wg.Add(1)
	probing := make(chan struct{})
	go func() {
		defer close(probing)
		d.probe(ctx, dead.name, counts, &order)
	}()
	down, _, err := d.await(ctx, mark, dead.name+" stepping down", func(e event) bool {
		return e.kind == evStepDown && e.node == dead.name && e.token == leader.token
	})
	if err != nil {
		return err
	}
	next, _, err := d.await(ctx, mark, "a successor taking over", electedMatch(dead.name))
	if err != nil {
		return err
	}
	seen, _, err := d.await(ctx, mark, "the follower naming "+next.node, followerMatch(next.node))
	if err != nil {
		return err
	}
	answered, _, err := d.await(ctx, mark, next.node+" answering through the proxy", func(e event) bool {
		return e.kind == evProxy && e.node == next.node
	})
	if err != nil {
		return err
	}
	<-probing
	d.flush()
	t.stepDown, t.takeover, t.takeoverFollower = down.at-gone.at, next.at-gone.at, seen.at-gone.at
	t.takeoverProxy = answered.at - gone.at
	var tally []string
	for _, k := range order {
		tally = append(tally, fmt.Sprintf("%s x%d", k, counts[k]))
	}
	t.vanishAnswers = strings.Join(tally, ", ")
	d.printf("  => %s stepped down %s after the vanish (%s), at its own deadline\n", dead.name, ms(t.stepDown), d.ofTTL(t.stepDown))
	d.printf("     %s took over %s after the vanish (%s, TTL %s), token %d > %d\n", next.node, ms(t.takeover), d.ofTTL(t.takeover), ShortDuration(d.cfg.TTL), next.token, leader.token)
	d.printf("     requests through the proxy got, in order: %s\n", t.vanishAnswers)
	if next.token <= leader.token {
		return violationf("fencing token did not increase: %d after %d", next.token, leader.token)
	}
	if down.at >= next.at {
		d.printf("     at most one leader at any instant: VIOLATED (%s stepped down %s after %s was elected)\n", dead.name, ms(down.at-next.at), next.node)
		return violationf("%s was still leader when %s was elected", dead.name, next.node)
	}
	d.printf("     %s stepped down %s before %s was elected\n", dead.name, ms(next.at-down.at), next.node)
	d.printf("  at most one leader at any instant: OK\n")
	return nil
}

// phaseStop (phase 4) stops everything and reports the store errors seen.
func (d *demo) phaseStop(t *times) {
	d.printf("\nPhase 4: stop every candidate, the follower, the proxy and the servers\n")
	began := time.Now()
	d.shutdown()
	t.stop = time.Since(began)
	d.printf("  stopped %d candidates, the follower, the proxy and the servers in %s\n", len(d.nodes), ms(t.stop))

	counts := make(map[string]int)
	example := make(map[string]string)
	for _, e := range d.rec.between(0, -1) {
		if e.kind == evStoreError {
			counts[e.node]++
			if example[e.node] == "" {
				example[e.node] = e.text
			}
		}
	}
	for _, n := range d.nodes {
		if n.vanished {
			d.printf("  %s (vanished) reported %d store errors, as expected, the first being\n", n.name, counts[n.name])
			d.printf("    %s\n", example[n.name])
			delete(counts, n.name)
		}
	}
	others := 0
	for _, c := range counts {
		others += c
	}
	d.printf("  store errors from the others: %d\n", others)
}
