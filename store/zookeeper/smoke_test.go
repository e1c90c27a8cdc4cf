package zookeeper

import (
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership"
)

// smokeTTL is the candidates' lease in the smoke test: long, so that a
// handoff within half of it can only come from the release, never from
// the lease running out, however loaded the machine.
const smokeTTL = 20 * time.Second

// leaders returns the candidates that are leaders, sampled twice so that a
// term ending between two samples is not mistaken for two leaders.
func leaders(cands []*leadership.Candidate) []int {
	var out []int
	for i, c := range cands {
		if c.IsLeader() {
			out = append(out, i)
		}
	}
	if len(out) > 1 {
		var again []int
		for _, i := range out {
			if cands[i].IsLeader() {
				again = append(again, i)
			}
		}
		out = again
	}
	return out
}

// awaitLeader waits until exactly one candidate other than those in not is
// leader, checking that there is never more than one, and returns it with
// the time waited.
func awaitLeader(t *testing.T, cands []*leadership.Candidate, within time.Duration, not ...int) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	for time.Since(start) < within {
		ls := leaders(cands)
		if len(ls) > 1 {
			t.Fatalf("two leaders at once: %v", ls)
		}
		if len(ls) == 1 && !contains(not, ls[0]) {
			return ls[0], time.Since(start)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no new leader within %v", within)
	return -1, 0
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func awaitFollower(t *testing.T, f *leadership.Follower, want string) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 10*time.Second {
		if f.Leader() == want {
			return time.Since(start)
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("follower names %q, want %q", f.Leader(), want)
	return 0
}

// runSmoke runs three candidates (each on its own client from open) and a
// follower (on a fourth) on key: one leader, a Resign handoff and a Stop
// handoff, both well under the TTL.
func runSmoke(t *testing.T, open func(t *testing.T) store.Store, key string) {
	names := []string{"alpha", "bravo", "charlie"}
	cands := make([]*leadership.Candidate, len(names))
	for i, name := range names {
		c := leadership.NewCandidate(open(t), key, name, smokeTTL)
		_, errs, err := c.RunForElection()
		if err != nil {
			t.Fatalf("%s: RunForElection: %v", name, err)
		}
		go func() {
			for err := range errs {
				t.Logf("%s: store error: %v", name, err)
			}
		}()
		cands[i] = c
		t.Cleanup(c.Stop)
	}
	f := leadership.NewFollower(open(t), key)
	_, ferrs, err := f.FollowElection()
	if err != nil {
		t.Fatalf("FollowElection: %v", err)
	}
	go func() {
		for err := range ferrs {
			t.Logf("follower: store error: %v", err)
		}
	}()
	t.Cleanup(f.Stop)

	first, d := awaitLeader(t, cands, 2*smokeTTL)
	t.Logf("first leader %s after %v", names[first], d)
	for range 3 {
		time.Sleep(50 * time.Millisecond)
		if ls := leaders(cands); len(ls) != 1 || ls[0] != first {
			t.Fatalf("leaders %v, want only %s", ls, names[first])
		}
	}
	awaitFollower(t, f, names[first])

	start := time.Now()
	cands[first].Resign()
	second, d := awaitLeader(t, cands, 2*smokeTTL, first)
	t.Logf("Resign handoff %s -> %s: %v (TTL %v)", names[first], names[second], d, smokeTTL)
	if d >= smokeTTL/2 {
		t.Errorf("Resign handoff took %v, want well under the TTL %v", d, smokeTTL)
	}
	awaitFollower(t, f, names[second])
	t.Logf("follower saw %s %v after Resign", names[second], time.Since(start))

	start = time.Now()
	cands[second].Stop()
	third, d := awaitLeader(t, cands, 2*smokeTTL, second)
	t.Logf("Stop handoff %s -> %s: %v (Stop returned after %v)", names[second], names[third], d, time.Since(start))
	if d >= smokeTTL/2 {
		t.Errorf("Stop handoff took %v, want well under the TTL %v", d, smokeTTL)
	}
	awaitFollower(t, f, names[third])
	t.Logf("follower saw %s %v after Stop", names[third], time.Since(start))
}
