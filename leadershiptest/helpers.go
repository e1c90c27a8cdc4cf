package leadershiptest

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/overlap"
)

// env is one subtest: its own key, its own clients, its deadlines.
type env struct {
	t    *testing.T
	s    *suite
	key  string
	ttl  time.Duration
	wait time.Duration // the generous bound for anything the test waits for
}

// client is one client of the backend, closed once when the subtest ends.
type client struct {
	*Client
	once sync.Once
}

func (c *client) close() { c.once.Do(func() { _ = c.Store.Close() }) }

// vanish makes the client disappear as a killed process would.
func (c *client) vanish() {
	if c.Vanish != nil {
		c.Vanish()
		return
	}
	c.close()
}

// client opens a new client of the backend.
func (e *env) client() *client {
	e.t.Helper()
	c := e.s.b.Client(e.t)
	if c == nil || c.Store == nil {
		e.t.Fatalf("backend %s: Client returned no store", e.s.b.Name())
	}
	cl := &client{Client: c}
	e.t.Cleanup(cl.close)
	return cl
}

// stamped is a value received from a channel, with when it was received.
type stamped[T any] struct {
	v  T
	at time.Time
}

// stream records everything a channel delivers, in order, until it closes.
type stream[T any] struct {
	mu     sync.Mutex
	vals   []stamped[T]
	closed bool
	signal chan struct{} // closed and replaced at every change
	done   chan struct{} // closed once the channel is closed and drained
}

func collect[T any](ch <-chan T) *stream[T] {
	s := &stream[T]{signal: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for v := range ch {
			s.mu.Lock()
			s.vals = append(s.vals, stamped[T]{v: v, at: time.Now()})
			close(s.signal)
			s.signal = make(chan struct{})
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.closed = true
		close(s.signal)
		s.signal = make(chan struct{})
		s.mu.Unlock()
	}()
	return s
}

// len returns how many values were received so far.
func (s *stream[T]) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.vals)
}

// all returns the values received so far.
func (s *stream[T]) all() []stamped[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]stamped[T](nil), s.vals...)
}

// find waits until a value at index from or later satisfies pred, and
// returns its index and the value. It fails the test after wait, or if the
// channel closes first.
func (s *stream[T]) find(t *testing.T, wait time.Duration, from int, what string, pred func(T) bool) (int, stamped[T]) {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for i := from; i < len(s.vals); i++ {
			if pred(s.vals[i].v) {
				v := s.vals[i]
				s.mu.Unlock()
				return i, v
			}
		}
		from = max(from, len(s.vals))
		closed, signal := s.closed, s.signal
		s.mu.Unlock()
		if closed {
			t.Fatalf("%s: the channel closed first (values: %v)", what, s.values())
		}
		select {
		case <-signal:
		case <-timer.C:
			t.Fatalf("%s: not within %v (values: %v)", what, wait, s.values())
		}
	}
}

// last returns the latest value received, or the zero value.
func (s *stream[T]) last() T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.vals) == 0 {
		var zero T
		return zero
	}
	return s.vals[len(s.vals)-1].v
}

// values returns the values received so far, for messages.
func (s *stream[T]) values() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]T, len(s.vals))
	for i, v := range s.vals {
		out[i] = v.v
	}
	if len(out) > 20 {
		out = out[len(out)-20:]
	}
	return out
}

// isClosed reports whether the channel has closed.
func (s *stream[T]) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// waitClosed waits for the channel to close.
func (s *stream[T]) waitClosed(t *testing.T, wait time.Duration, what string) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(wait):
		t.Fatalf("%s: not closed within %v", what, wait)
	}
}

// cand is a running candidate whose channels the suite records.
type cand struct {
	*leadership.Candidate
	name    string
	cl      *client
	elected *stream[bool]
	errs    *stream[error]
	status  *stream[leadership.Status]
}

// leader is the leader the candidate last reported on its Status stream.
func (c *cand) leader() string { return c.status.last().Leader }

// candidate starts a candidate named name on cl, stopped when the subtest
// ends.
func (e *env) candidate(cl *client, name string, opts ...leadership.Option) *cand {
	e.t.Helper()
	c := leadership.NewCandidate(cl.Store, e.key, name, e.ttl, opts...)
	var el <-chan bool
	var errs <-chan error
	e.mustStart("RunForElection "+name, func() (err error) {
		el, errs, err = c.RunForElection()
		return err
	})
	return e.recorded(c, name, cl, el, errs)
}

// recorded records the channels of c, a started candidate named name on cl
// (nil for a client the suite does not keep), and stops c when the subtest
// ends.
func (e *env) recorded(c *leadership.Candidate, name string, cl *client, el <-chan bool, errs <-chan error) *cand {
	r := &cand{Candidate: c, name: name, cl: cl, elected: collect(el), errs: collect(errs), status: collect(c.Status())}
	e.t.Cleanup(func() {
		c.Stop()
		<-r.elected.done
		<-r.errs.done
		<-r.status.done
	})
	return r
}

// startRetrying calls start until it succeeds, fails other than with
// leadership.ErrStore, or e.wait has passed. A start whose first read timed
// out on a busy server may be repeated (docs/semantics.md); a loaded
// machine needs that wherever the suite starts a candidate or a follower.
func (e *env) startRetrying(start func() error) error {
	begin := time.Now()
	err := start()
	for errors.Is(err, leadership.ErrStore) && time.Since(begin) < e.wait {
		time.Sleep(10 * time.Millisecond)
		err = start()
	}
	return err
}

// mustStart calls start as startRetrying does, and fails the test if it
// does not succeed; what names the call in the message.
func (e *env) mustStart(what string, start func() error) {
	e.t.Helper()
	if err := e.startRetrying(start); err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
}

// candidates starts n candidates, each on its own client.
func (e *env) candidates(n int, opts ...leadership.Option) []*cand {
	e.t.Helper()
	cs := make([]*cand, n)
	for i := range cs {
		cs[i] = e.candidate(e.client(), fmt.Sprintf("node-%d", i), opts...)
	}
	return cs
}

// fol is a running follower whose channels the suite records.
type fol struct {
	*leadership.Follower
	leaders *stream[string]
	errs    *stream[error]
	obs     *stream[leadership.Status]
}

// follower starts a follower on cl, stopped when the subtest ends.
func (e *env) follower(cl *client) *fol {
	e.t.Helper()
	f := leadership.NewFollower(cl.Store, e.key)
	var leaders <-chan string
	var errs <-chan error
	e.mustStart("FollowElection", func() (err error) {
		leaders, errs, err = f.FollowElection()
		return err
	})
	r := &fol{Follower: f, leaders: collect(leaders), errs: collect(errs), obs: collect(f.Status())}
	e.t.Cleanup(func() {
		f.Stop()
		<-r.leaders.done
		<-r.errs.done
		<-r.obs.done
	})
	return r
}

// eventually polls cond until it holds, and fails the test after e.wait.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(e.wait)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %v", what, e.wait)
		}
		time.Sleep(time.Millisecond)
	}
}

// leaderAfter waits until one of cs leads a term whose token is above
// after, and returns it with that term.
func (e *env) leaderAfter(cs []*cand, after uint64) (*cand, leadership.Term) {
	e.t.Helper()
	var found *cand
	var term leadership.Term
	e.eventually(fmt.Sprintf("a leader with a token above %d among %s", after, names(cs)), func() bool {
		for _, c := range cs {
			if t, ok := c.CurrentTerm(); ok && t.Token > after {
				found, term = c, t
				return true
			}
		}
		return false
	})
	return found, term
}

// leader waits for a leader among cs.
func (e *env) leader(cs []*cand) (*cand, leadership.Term) {
	e.t.Helper()
	return e.leaderAfter(cs, 0)
}

// timing logs a measured duration and keeps it for the summary of Run.
func (e *env) timing(what string, d time.Duration) {
	e.t.Helper()
	e.t.Logf("timing: %s: %v", what, d.Round(100*time.Microsecond))
	e.s.mu.Lock()
	e.s.timings = append(e.s.timings, fmt.Sprintf("%s: %s: %v", e.t.Name(), what, d.Round(100*time.Microsecond)))
	e.s.mu.Unlock()
}

// ctx returns a context that ends after e.wait or with the subtest.
func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), e.wait)
	e.t.Cleanup(cancel)
	return ctx
}

// termEnd records when a term's context ends.
type termEnd struct {
	done chan struct{}
	at   time.Time
}

func watchTermEnd(term leadership.Term) *termEnd {
	te := &termEnd{done: make(chan struct{})}
	go func() {
		<-term.Context().Done()
		te.at = time.Now()
		close(te.done)
	}()
	return te
}

// wait returns when the term ended; it fails the test after d.
func (te *termEnd) wait(t *testing.T, d time.Duration, what string) time.Time {
	t.Helper()
	select {
	case <-te.done:
		return te.at
	case <-time.After(d):
		t.Fatalf("%s: the term did not end within %v", what, d)
	}
	return time.Time{}
}

// others returns cs without the given candidates.
func others(cs []*cand, not ...*cand) []*cand {
	var out []*cand
next:
	for _, c := range cs {
		for _, n := range not {
			if c == n {
				continue next
			}
		}
		out = append(out, c)
	}
	return out
}

func names(cs []*cand) string {
	var ns []string
	for _, c := range cs {
		ns = append(ns, c.name)
	}
	return "[" + strings.Join(ns, " ") + "]"
}

// exclusion samples CurrentTerm of every candidate as often as it can, for
// as long as it runs, and records a violation of "at most one leader at any
// instant" or of "fencing tokens only grow" (internal/overlap, the checker
// the root package's tests use too).
type exclusion struct {
	c *overlap.Checker

	mu      sync.Mutex
	checked bool
}

// exclusion starts sampling cs, and returns once the first round of
// samples is taken.
func (e *env) exclusion(cs []*cand) *exclusion {
	ps := make([]overlap.Participant, len(cs))
	for i, c := range cs {
		ps[i] = participant(c)
	}
	return e.exclusionOf(ps)
}

// participant is c, as the exclusion sampler sees it.
func participant(c *cand) overlap.Participant {
	return overlap.Participant{Name: c.name, Term: func() (uint64, bool) {
		term, ok := c.CurrentTerm()
		return term.Token, ok
	}}
}

// exclusionOf is exclusion on participants given as such.
func (e *env) exclusionOf(ps []overlap.Participant) *exclusion {
	x := &exclusion{c: overlap.Start(100*time.Microsecond, ps...)}
	e.t.Cleanup(func() { x.check(e.t) })
	return x
}

// check stops the sampler and fails the test on a violation. Only the
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

// libraryPrefix starts the name of every function of the leadership
// package itself (not of its subpackages), as printed in a stack trace.
const libraryPrefix = "github.com/leadership-go/leadership."

// goroutineIDs returns the ids of the goroutines running now.
func goroutineIDs() map[string]bool {
	ids := make(map[string]bool)
	for _, g := range allStacks() {
		ids[goroutineID(g)] = true
	}
	return ids
}

// allStacks returns the stack of every goroutine, as runtime.Stack(buf,
// true) writes them, one string each.
func allStacks() []string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	return strings.Split(b.String(), "\n\n")
}

func goroutineID(stack string) string {
	head, _, _ := strings.Cut(stack, " [")
	return head
}

// libraryGoroutines returns the stacks of the goroutines that run code of
// the leadership package and were not running before (ids in before).
func libraryGoroutines(before map[string]bool) []string {
	var out []string
	for _, g := range allStacks() {
		if before[goroutineID(g)] {
			continue
		}
		for line := range strings.SplitSeq(g, "\n") {
			line = strings.TrimPrefix(line, "created by ")
			if strings.HasPrefix(line, libraryPrefix) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// noLibraryGoroutinesLeft fails the test if goroutines of the leadership
// package started during the test are still running a while after it
// stopped everything.
func noLibraryGoroutinesLeft(t *testing.T, before map[string]bool, grace time.Duration) {
	t.Helper()
	deadline := time.Now().Add(grace)
	for {
		left := libraryGoroutines(before)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines of the leadership package still run %v after everything was stopped:\n%s",
				len(left), grace, strings.Join(left, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// since describes, for a failure message, what the follower and each of cs
// reported from start on: the leaders the follower named and the errors
// the candidates sent, each with its time after start. A slow handoff
// reads differently when the release failed (an error of the old leader),
// when the watches lagged (the follower names "" late) or when the
// successor's write was slow.
func since(start time.Time, f *fol, cs ...*cand) string {
	var b strings.Builder
	b.WriteString("follower named:")
	for _, v := range f.leaders.all() {
		if !v.at.Before(start) {
			fmt.Fprintf(&b, " %q@%v", v.v, v.at.Sub(start).Round(time.Millisecond))
		}
	}
	for _, c := range cs {
		fmt.Fprintf(&b, "; %s's errors:", c.name)
		for _, v := range c.errs.all() {
			if !v.at.Before(start) {
				fmt.Fprintf(&b, " %v@%v", v.v, v.at.Sub(start).Round(time.Millisecond))
			}
		}
	}
	return b.String()
}
