package leadershiptest

import (
	"testing"
	"time"
)

// RunSlowLink checks an election whose every client reaches the store over
// a slow link (a Network with a Latency: 150 ms each way is a 300 ms round
// trip, another region): three candidates and a follower elect a leader
// and the follower names it; a HandOff hands the term to a named
// candidate, and the follower names it; that leader's client then vanishes,
// and another candidate takes over within the bound of
// VanishedLeaderReplaced (2 x TTL + 1s), after the vanished leader's term
// ended, while the follower names "" and then the successor. At no instant
// do two candidates lead. The suite's TTL should allow a few round trips
// per request (docs/semantics.md, "Slow links").
func RunSlowLink(t *testing.T, b Backend) {
	t.Helper()
	s := &suite{b: b, ttl: b.TTL()}
	s.run(t, subtest{name: "SlowLink", run: testSlowLink})
}

func testSlowLink(e *env) {
	cs := e.candidates(3)
	x, f, l, term := e.watchedLeader(cs)

	// A handoff to a named waiting candidate.
	next := others(cs, l)[0]
	e.eventually(next.name+" knows the leader", func() bool { return next.leader() == l.name })
	from := f.leaders.len()
	start := time.Now()
	if err := l.HandOff(e.ctx(), next.name); err != nil {
		e.t.Fatalf("HandOff from %s to %s: %v (%s)", l.name, next.name, err, since(start, f, cs...))
	}
	nl, nt := e.leaderAfter(cs, term.Token)
	if nl != next {
		e.t.Fatalf("%s leads term %d after the handoff to %s", nl.name, nt.Token, next.name)
	}
	e.timing("HandOff returns", time.Since(start))
	_, v := f.leaders.find(e.t, e.wait, from, "follower names the successor", func(s string) bool { return s == next.name })
	e.timing("follower names the successor, after the HandOff", v.at.Sub(start))

	// The leader's client vanishes: another takes over.
	l, term = next, nt
	rest := others(cs, l)
	for _, c := range rest {
		e.eventually(c.name+" knows the leader", func() bool { return c.leader() == l.name })
	}
	end := watchTermEnd(term)
	from = f.leaders.len()
	gone := time.Now()
	l.cl.vanish()
	succ, st := e.leaderAfter(rest, term.Token)
	takeover := st.Began.Sub(gone)
	e.timing("takeover after the leader's client vanished", takeover)
	if takeover > 2*e.ttl+time.Second {
		e.t.Fatalf("takeover took %v after the vanish, over 2 x TTL %v + 1s", takeover, e.ttl)
	}
	ended := end.wait(e.t, e.wait, "the vanished leader's term")
	if !ended.Before(st.Began) {
		e.t.Fatalf("the vanished leader's term ended %v after the vanish, after its successor's began (%v)", ended.Sub(gone), st.Began.Sub(gone))
	}
	iNone, none := f.leaders.find(e.t, e.wait, from, "follower drops the vanished leader", func(s string) bool { return s != l.name })
	if none.v != "" {
		e.t.Fatalf("follower went from %s to %q, want \"\" first", l.name, none.v)
	}
	_, v = f.leaders.find(e.t, e.wait, iNone, "follower names the successor", func(s string) bool { return s == succ.name })
	e.timing("follower names the successor, after the vanish", v.at.Sub(gone))
	x.check(e.t)
}
