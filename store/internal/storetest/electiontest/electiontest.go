// Package electiontest holds the election checks the store adapters'
// tests share: a smoke test of the library on a real server, the
// leadershiptest.Network of a test server, and the failover run on a
// cluster. It imports the leadership package, which imports store/memory:
// store/memory's own tests cannot use it.
package electiontest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// OpenFunc opens a client of a store on endpoints.
type OpenFunc func(ctx context.Context, endpoints []string) (store.Store, error)

// OpenBudget is the dial timeout an adapter's conformance suite may give
// its clients: the open may take as long as the harness' context allows
// (30s), since a loaded machine or a cluster still settling after another
// test can take longer than the adapters' default 5s to answer a first
// request.
const OpenBudget = 30 * time.Second

// Opener is the OpenFunc that opens an adapter's store with open, on the
// Config that config makes of the endpoints.
func Opener[C any, S store.Store](open func(context.Context, C) (S, error), config func(endpoints []string) C) OpenFunc {
	return func(ctx context.Context, endpoints []string) (store.Store, error) {
		s, err := open(ctx, config(endpoints))
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// Network returns the leadershiptest.Network named backend of the test
// servers at endpoints. Only when storetest.RestartAllowed and server is
// not "" does it get Stop and Start: scripts/servers.sh stops server (the
// name the script knows it by) and wipes its data, the harder case of a
// restart, and starts it again, empty (PostgreSQL: a new cluster and
// database).
func Network(backend, server string, endpoints []string, open OpenFunc) *leadershiptest.Network {
	n := &leadershiptest.Network{BackendName: backend, Endpoints: endpoints, Open: open}
	if storetest.RestartAllowed() && server != "" {
		n.Stop = func(t *testing.T) { storetest.ServersScript(t, "stop", "--wipe", server) }
		n.Start = func(t *testing.T) { storetest.ServersScript(t, "start", server) }
	}
	return n
}

// Forwarder returns a leadershiptest.Forwarder to target, closed at the
// end of the test.
func Forwarder(t testing.TB, target string) *leadershiptest.Forwarder {
	t.Helper()
	fwd, err := leadershiptest.NewForwarder(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fwd.Close() })
	return fwd
}

// Conformance runs leadershiptest's conformance suite (leadershiptest.Run)
// on Network(backend, server, endpoints, open).
func Conformance(t *testing.T, backend, server string, endpoints []string, open OpenFunc) {
	t.Helper()
	leadershiptest.Run(t, Network(backend, server, endpoints, open))
}

// RunClusterFailover runs leadershiptest.RunFailover on the network named
// backend of endpoints, the members of the scripts/servers.sh group
// cluster, opened with open: the failure kills the member that leads the
// cluster's own consensus, the recovery starts it again. Killing a member
// of the shared cluster needs storetest.RestartAllowed; the test is
// skipped otherwise.
func RunClusterFailover(t *testing.T, backend string, endpoints []string, open OpenFunc, cluster string) {
	t.Helper()
	if !storetest.RestartAllowed() {
		t.Skipf("LEADERSHIP_RESTART_SERVERS is not 1: this test kills a member of the shared %s", cluster)
	}
	leadershiptest.RunFailover(t, Network(backend, "", endpoints, open),
		func(t *testing.T) {
			t.Logf("killed %s member: %s", cluster, storetest.ServersScript(t, "kill", cluster, "leader"))
		},
		func(t *testing.T) { storetest.ServersScript(t, "start", cluster) })
}

// smokeTTL is the candidates' lease in Smoke: long, so that a handoff
// within half of it can only come from the release, never from the lease
// running out, however loaded the machine.
const smokeTTL = 20 * time.Second

// Smoke is the library's exclusion smoke test on a real server: three
// candidates on key, each on its own client from open, and a follower on a
// fourth. One leader is elected and the follower names it; a Resign and
// then a Stop hand leadership over within half the TTL; at no moment do
// two candidates both lead. key is deleted at cleanup.
func Smoke(t *testing.T, key string, open func(t *testing.T) store.Store) {
	var readers sync.WaitGroup
	t.Cleanup(readers.Wait) // last: after every candidate and the follower stopped
	cleaner := open(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cleaner.Delete(ctx, key)
	})
	logErrs := func(who string, errs <-chan error) {
		readers.Go(func() {
			for err := range errs {
				t.Logf("%s: store error: %v", who, err)
			}
		})
	}

	type elected struct {
		who int
		at  time.Time
	}
	wins := make(chan elected, 64)
	names := []string{"c0", "c1", "c2"}
	start := time.Now()
	cands := make([]*leadership.Candidate, len(names))
	for i, name := range names {
		c := leadership.NewCandidate(open(t), key, name, smokeTTL)
		ch, errs, err := c.RunForElection()
		if err != nil {
			t.Fatalf("RunForElection(%s): %v", name, err)
		}
		t.Cleanup(c.Stop) // before its client closes
		cands[i] = c
		readers.Go(func() {
			for v := range ch {
				if v {
					wins <- elected{i, time.Now()}
				}
			}
		})
		logErrs(name, errs)
	}
	follower := leadership.NewFollower(open(t), key)
	leaders, ferrs, err := follower.FollowElection()
	if err != nil {
		t.Fatalf("FollowElection: %v", err)
	}
	t.Cleanup(follower.Stop)
	logErrs("follower", ferrs)

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
		deadline := time.After(storetest.Patience)
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
	if leading != 1 || !cands[first.who].IsLeader() {
		t.Fatalf("%d leaders after the first election (%s elected)", leading, names[first.who])
	}

	// A release hands leadership over to another candidate well under the
	// TTL, and the follower names it.
	handoff := func(what string, from elected, release func()) elected {
		t.Helper()
		at := time.Now()
		release()
		next := waitWin(what, at, from.who)
		if d := next.at.Sub(at); d > smokeTTL/2 {
			t.Errorf("%s took %v, want well under the TTL %v", what, d, smokeTTL)
		}
		waitFollower(names[next.who])
		return next
	}
	second := handoff("resign handoff", first, cands[first.who].Resign)
	handoff("stop handoff", second, cands[second.who].Stop)
}

// SlowLinkLatency is the one-way delay of SlowLink's forwarders: 300 ms
// round trips, a link to another region; SlowLinkTTL is its candidates'
// lease, whose default RequestTimeout (TTL/3, 1 s) leaves room for a store
// call of 3 round trips (docs/semantics.md, "Slow links").
const (
	SlowLinkLatency = 150 * time.Millisecond
	SlowLinkTTL     = 3 * time.Second
)

// SlowLink runs leadershiptest.RunSlowLink on the network named backend of
// endpoints, every client behind forwarders that delay each byte by
// SlowLinkLatency each way.
func SlowLink(t *testing.T, backend string, endpoints []string, open OpenFunc) {
	t.Helper()
	n := Network(backend, "", endpoints, open)
	n.Latency, n.LeaseTTL = SlowLinkLatency, SlowLinkTTL
	leadershiptest.RunSlowLink(t, n)
}
