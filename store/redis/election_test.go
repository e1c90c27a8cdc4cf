package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership"
)

func TestElection(t *testing.T) {
	cfg := serverConfig(t)
	runElection(t, func(t *testing.T) store.Store { return openClient(t, cfg) })
}

// smokeTTL is the candidates' lease in the election smoke test: long, so
// that a handoff within half of it can only come from the release, never
// from the lease running out, however loaded the machine.
const smokeTTL = 20 * time.Second

// runElection is the library's exclusion smoke test on a real server: three
// candidates, each on its own client, and a follower on a fourth. One
// leader is elected; a Resign and then a Stop hand leadership over well
// under the TTL; at no moment do two candidates both hold leadership.
func runElection(t *testing.T, open func(t *testing.T) store.Store) {
	key := uniqueKey(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = open(t).Delete(ctx, key)
	})

	type elected struct {
		who int
		at  time.Time
	}
	wins := make(chan elected, 64)
	names := []string{"c0", "c1", "c2"}
	start := time.Now()
	cands := make([]*leadership.Candidate, len(names))
	var readers sync.WaitGroup
	for i, name := range names {
		c := leadership.NewCandidate(open(t), key, name, smokeTTL)
		ch, errs, err := c.RunForElection()
		if err != nil {
			t.Fatalf("RunForElection(%s): %v", name, err)
		}
		cands[i] = c
		readers.Go(func() {
			for v := range ch {
				if v {
					wins <- elected{i, time.Now()}
				}
			}
		})
		readers.Go(func() {
			for err := range errs {
				t.Logf("%s: error: %v", name, err)
			}
		})
	}
	t.Cleanup(func() {
		for _, c := range cands {
			c.Stop()
		}
		readers.Wait()
	})

	follower := leadership.NewFollower(open(t), key)
	leaders, _, err := follower.FollowElection()
	if err != nil {
		t.Fatalf("FollowElection: %v", err)
	}
	t.Cleanup(follower.Stop)

	// Exclusion: sample every candidate's IsLeader; two candidates seen
	// leading in two consecutive passes led at the same moment.
	stopCheck := make(chan struct{})
	var checker sync.WaitGroup
	var overlaps int
	checker.Go(func() {
		prev := make([]bool, len(cands))
		for {
			select {
			case <-stopCheck:
				return
			default:
			}
			both := 0
			for i, c := range cands {
				now := c.IsLeader()
				if now && prev[i] {
					both++
				}
				prev[i] = now
			}
			if both > 1 {
				overlaps++
			}
			time.Sleep(200 * time.Microsecond)
		}
	})
	defer func() {
		close(stopCheck)
		checker.Wait()
		if overlaps > 0 {
			t.Errorf("two candidates led at once in %d samples", overlaps)
		}
	}()

	waitWin := func(what string, since time.Time, not int) elected {
		t.Helper()
		select {
		case w := <-wins:
			if w.who == not {
				t.Fatalf("%s: %s won again", what, names[w.who])
			}
			t.Logf("%s: %s elected after %v", what, names[w.who], w.at.Sub(since).Round(time.Millisecond))
			return w
		case <-time.After(2 * smokeTTL):
			t.Fatalf("%s: no candidate elected", what)
		}
		return elected{}
	}
	waitFollower := func(want string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case got, ok := <-leaders:
				if !ok {
					t.Fatalf("follower channel closed waiting for %q", want)
				}
				if got == want {
					return
				}
			case <-deadline:
				t.Fatalf("follower did not report %q", want)
			}
		}
	}

	first := waitWin("first election", start, -1)
	waitFollower(names[first.who])
	leading := 0
	for _, c := range cands {
		if c.IsLeader() {
			leading++
		}
	}
	if leading != 1 {
		t.Fatalf("%d leaders after the first election", leading)
	}

	resignAt := time.Now()
	cands[first.who].Resign()
	second := waitWin("resign handoff", resignAt, first.who)
	if d := second.at.Sub(resignAt); d > smokeTTL/2 {
		t.Errorf("resign handoff took %v, want well under the TTL %v", d, smokeTTL)
	}
	waitFollower(names[second.who])

	stopAt := time.Now()
	cands[second.who].Stop()
	third := waitWin("stop handoff", stopAt, second.who)
	if d := third.at.Sub(stopAt); d > smokeTTL/2 {
		t.Errorf("stop handoff took %v, want well under the TTL %v", d, smokeTTL)
	}
	waitFollower(names[third.who])
}
