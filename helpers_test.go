package leadership

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leadership-go/leadership/internal/overlap"
	"github.com/leadership-go/leadership/store/memory"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait is the generous deadline every test waits for an event with.
const wait = 30 * time.Second

var storeSeq atomic.Int64

// cluster is one memory backend shared by the handles a test opens.
type cluster struct {
	t    *testing.T
	name string
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	return &cluster{t: t, name: fmt.Sprintf("%s-%d", t.Name(), storeSeq.Add(1))}
}

// handle opens a new client of the cluster, closed when the test ends.
func (c *cluster) handle() *memory.Store {
	c.t.Helper()
	h, err := memory.Open(context.Background(), memory.Config{Name: c.name})
	if err != nil {
		c.t.Fatalf("open memory store: %v", err)
	}
	c.t.Cleanup(func() { _ = h.Close() })
	return h
}

// recv waits for one value from ch.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	return recvUntil(t, ch, what, func(T) bool { return true })
}

// recvUntil reads ch until pred holds for a value, and returns it.
func recvUntil[T any](t *testing.T, ch <-chan T, what string, pred func(T) bool) T {
	t.Helper()
	v, ok := readUntil(t, ch, what, "not seen", pred)
	if !ok {
		t.Fatalf("%s: channel closed", what)
	}
	return v
}

// eventually polls cond until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, wait)
		}
		time.Sleep(time.Millisecond)
	}
}

// closed waits for ch to be closed, discarding values.
func closed[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	readUntil(t, ch, what, "not closed", func(T) bool { return false })
}

// readUntil reads ch until pred holds for a value (ok) or ch is closed (not
// ok), and fails the test, saying what and miss, if neither happens within
// wait.
func readUntil[T any](t *testing.T, ch <-chan T, what, miss string, pred func(T) bool) (v T, ok bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case v, ok = <-ch:
			if !ok || pred(v) {
				return v, ok
			}
		case <-deadline:
			t.Fatalf("%s: %s within %v", what, miss, wait)
		}
	}
}

// runner is a candidate whose channels are read by the test.
type runner struct {
	*Candidate
	name    string
	elected <-chan bool
	errs    <-chan error
}

// campaign starts n candidates, each on its own handle.
func (c *cluster) campaign(key string, ttl time.Duration, n int, opts ...Option) []*runner {
	c.t.Helper()
	rs := make([]*runner, n)
	for i := range rs {
		name := fmt.Sprintf("node-%d", i)
		cand := NewCandidate(c.handle(), key, name, ttl, opts...)
		el, errs, err := cand.RunForElection()
		if err != nil {
			c.t.Fatalf("RunForElection %s: %v", name, err)
		}
		c.t.Cleanup(cand.Stop)
		rs[i] = &runner{Candidate: cand, name: name, elected: el, errs: errs}
	}
	return rs
}

// leaderAndOther starts two candidates on key, each on its own handle,
// waits until one leads, and returns it and the other.
func (c *cluster) leaderAndOther(key string, ttl time.Duration, opts ...Option) (leader, other *runner) {
	c.t.Helper()
	rs := c.campaign(key, ttl, 2, opts...)
	leader = leaderOf(c.t, rs)
	return leader, except(rs, leader)[0]
}

// watcher is a follower whose channels are read by the test.
type watcher struct {
	*Follower
	leaders <-chan string
	errs    <-chan error
}

// follow starts a follower of key on its own handle, stopped when the test
// ends.
func (c *cluster) follow(key string, opts ...Option) *watcher {
	c.t.Helper()
	f := NewFollower(c.handle(), key, opts...)
	leaders, errs, err := f.FollowElection()
	if err != nil {
		c.t.Fatalf("FollowElection: %v", err)
	}
	c.t.Cleanup(f.Stop)
	return &watcher{Follower: f, leaders: leaders, errs: errs}
}

// termEnds fails the test with msg unless term's context ends within wait.
func termEnds(t *testing.T, term Term, msg string) {
	t.Helper()
	select {
	case <-term.Context().Done():
	case <-time.After(wait):
		t.Fatal(msg)
	}
}

// except returns the runners of rs other than r.
func except(rs []*runner, r *runner) []*runner {
	var others []*runner
	for _, o := range rs {
		if o != r {
			others = append(others, o)
		}
	}
	return others
}

// leaderOf waits until exactly one runner leads, and returns it.
func leaderOf(t *testing.T, rs []*runner) *runner {
	t.Helper()
	var found *runner
	eventually(t, "a leader", func() bool {
		found = nil
		for _, r := range rs {
			if r.IsLeader() {
				if found != nil {
					t.Fatalf("two leaders: %s and %s", found.name, r.name)
				}
				found = r
			}
		}
		return found != nil
	})
	return found
}

// leaderAmong waits until one of rs leads, and returns it; what names
// the awaited leader in the failure.
func leaderAmong(t *testing.T, what string, rs []*runner) *runner {
	t.Helper()
	var found *runner
	eventually(t, what, func() bool {
		for _, r := range rs {
			if r.IsLeader() {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

// tokenAbove fails the test unless r leads a term whose token is above
// old's; what says which term.
func tokenAbove(t *testing.T, r *runner, old Term, what string) {
	t.Helper()
	if cur, _ := r.CurrentTerm(); cur.Token <= old.Token {
		t.Fatalf("%s: token %d not above %d", what, cur.Token, old.Token)
	}
}

// exclusion checks, as often as it can, that no two candidates lead at
// once and that fencing tokens only grow (internal/overlap, the checker
// leadershiptest uses too): CurrentTerm is exact (it compares the lease's
// deadline with the clock), so a sampled overlap is a real one.
type exclusion struct {
	c *overlap.Checker

	mu      sync.Mutex
	checked bool
}

// watchExclusion starts sampling cands, and returns once the first round of
// samples is taken; the test's end checks it. In a synctest bubble the
// sampler's pause moves the bubble's clock by exclusionEvery.
func watchExclusion(t *testing.T, cands ...*Candidate) *exclusion {
	ps := make([]overlap.Participant, len(cands))
	for i, c := range cands {
		ps[i] = overlap.Participant{Name: c.node, Term: func() (uint64, bool) {
			term, ok := c.CurrentTerm()
			return term.Token, ok
		}}
	}
	x := &exclusion{c: overlap.Start(exclusionEvery, ps...)}
	t.Cleanup(func() { x.check(t) })
	return x
}

// exclusionEvery is the exclusion sampler's pause between two rounds.
const exclusionEvery = 50 * time.Microsecond

// check stops the sampler and fails the test on a violation; only the
// first call reports.
func (x *exclusion) check(t *testing.T) {
	t.Helper()
	err := x.c.Stop()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.checked {
		return
	}
	x.checked = true
	if err != nil {
		t.Error(err)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// recordOf reads the election record at key.
func recordOf(t *testing.T, h Backend, key string) record {
	t.Helper()
	s, err := readKey(ctxT(t), h, key)
	if err != nil || s.kind != snapRecord {
		t.Fatalf("read %s: %v (%v)", key, err, s.kind)
	}
	return s.rec
}

// nextNamed receives the next leader name from leaders, with no deadline of
// its own (the tests that use it run in a synctest bubble), and fails the
// test unless it is want; when says at which point of the test.
func nextNamed(t *testing.T, leaders <-chan string, want, when string) {
	t.Helper()
	if got := <-leaders; got != want {
		t.Fatalf("%s: the follower named %q, want %q", when, got, want)
	}
}
