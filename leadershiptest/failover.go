package leadershiptest

import (
	"testing"
	"time"
)

// RunFailover checks an election across a failure of the store's own
// consensus: three candidates and a follower run on b (a replicated store:
// an etcd cluster, a ZooKeeper ensemble), kill then stops the member that
// leads the store's own consensus, and the test checks that no two
// candidates lead at any instant and that the election goes on: after the
// failover a leader is known to the candidates and the follower, and a
// Resign still hands over. restore, if not nil, brings the member back at
// the end.
func RunFailover(t *testing.T, b Backend, kill, restore func(t *testing.T)) {
	t.Helper()
	s := &suite{b: b, ttl: b.TTL()}
	s.run(t, subtest{name: "Failover", run: func(e *env) {
		cs := e.candidates(3)
		f := e.follower(e.client())
		x := e.exclusion(cs)
		old, term := e.leader(cs)
		f.leaders.find(e.t, e.wait, 0, "follower names the first leader", func(s string) bool { return s == old.name })

		start := time.Now()
		kill(t)
		if restore != nil {
			t.Cleanup(func() { restore(t) })
		}
		// The election goes on: still or again a leader, seen by the follower.
		e.eventually("a leader after the store's failover", func() bool {
			for _, c := range cs {
				if c.IsLeader() {
					return f.Leader() == c.name
				}
			}
			return false
		})
		e.timing("leader known after killing the store's consensus leader", time.Since(start))
		now, nowTerm := e.leaderAfter(cs, 0)
		if nowTerm.Token < term.Token {
			t.Fatalf("token went back from %d to %d", term.Token, nowTerm.Token)
		}
		// And it still works: a resign hands over.
		resigned := time.Now()
		now.Resign()
		next, _ := e.leaderAfter(others(cs, now), nowTerm.Token)
		e.timing("resign handoff after the failover", time.Since(resigned))
		e.eventually("follower names the next leader", func() bool { return f.Leader() == next.name })
		x.check(t)
	}})
}
