package leadership

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/memory"
)

// faultStore is a memory store handle whose calls a test can make
// misbehave, one fault at a time, for the regression tests of the safety
// issue. The simulator (sim*_test.go) injects the same faults at random.
type faultStore struct {
	*memory.Store

	hangGets   atomic.Bool  // Get blocks, ignoring its context, until release
	hangPuts   atomic.Bool  // AtomicPut blocks, ignoring its context, until release
	holdPuts   atomic.Bool  // AtomicPut answers ctx's error, and is applied at applyHeld
	failGets   atomic.Bool  // Get fails with ErrNotReachable
	getDelay   atomic.Int64 // Get reads at once and answers this much later (or at ctx's end)
	applyLate  atomic.Bool  // AtomicPut waits for ctx to end, then applies and reports success
	watchDelay atomic.Int64 // watch events carrying a value arrive this much later
	openDelay  atomic.Int64 // Watch answers this much later, its events queued meanwhile
	onlyChange atomic.Bool  // Watch sends changes only, not the current value first
	wroteAt    atomic.Int64 // when the last write through this handle was applied (UnixNano)
	calls      atomic.Int64 // every call
	cutAfter   atomic.Bool  // after a conflicting write, the next read is the last call that works
	conflicted atomic.Bool

	mu       sync.Mutex
	released chan struct{}
	held     []func()
}

func newFaultStore(t *testing.T, name string) *faultStore {
	t.Helper()
	h, err := memory.Open(context.Background(), memory.Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	s := &faultStore{Store: h, released: make(chan struct{})}
	t.Cleanup(func() {
		s.release()
		_ = h.Close()
	})
	return s
}

// release ends every hang; later calls no longer hang.
func (s *faultStore) release() {
	s.hangGets.Store(false)
	s.hangPuts.Store(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.released:
	default:
		close(s.released)
	}
}

// applyHeld applies the writes held so far, in order, as a server that
// resumes applies what it had queued.
func (s *faultStore) applyHeld() {
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.mu.Unlock()
	for _, apply := range held {
		apply()
	}
}

func (s *faultStore) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	s.calls.Add(1)
	if s.failGets.Load() {
		return nil, store.ErrNotReachable
	}
	if s.hangGets.Load() {
		<-s.released
	}
	p, err := s.Store.Get(ctx, key, opts)
	if s.conflicted.Load() {
		memfault.Disconnect(s.Store)
	}
	if d := time.Duration(s.getDelay.Load()); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return p, err
}

func (s *faultStore) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	s.calls.Add(1)
	switch {
	case s.hangPuts.Load():
		<-s.released
	case s.holdPuts.Load():
		s.mu.Lock()
		s.held = append(s.held, func() { _, _, _ = s.Store.AtomicPut(context.Background(), key, value, prev, opts) })
		s.mu.Unlock()
		<-ctx.Done()
		return false, nil, ctx.Err()
	case s.applyLate.Load():
		<-ctx.Done()
		return s.Store.AtomicPut(context.Background(), key, value, prev, opts)
	}
	ok, p, err := s.Store.AtomicPut(ctx, key, value, prev, opts)
	if err == nil {
		s.wroteAt.Store(time.Now().UnixNano())
	}
	if s.cutAfter.Load() && isConflict(err) {
		s.conflicted.Store(true)
	}
	return ok, p, err
}

// Watch delays the events that carry a value by watchDelay; deletes pass at
// once, so a read can show a change before a late event arrives. With
// openDelay it answers late, the watch already running; with onlyChange
// it does not send the current value first (the Backend contract allows
// both).
func (s *faultStore) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	s.calls.Add(1)
	in, err := s.Store.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	out := make(chan *store.KVPair)
	if d := time.Duration(s.openDelay.Load()); d > 0 {
		defer time.Sleep(d) // after the forwarding below has started
	}
	var wg sync.WaitGroup
	send := func(p *store.KVPair) {
		select {
		case out <- p:
		case <-ctx.Done():
		}
	}
	skip := s.onlyChange.Load()
	go func() {
		defer close(out)
		defer wg.Wait()
		for p := range in {
			if skip { // the memory store sends the current value first
				skip = false
				continue
			}
			d := time.Duration(s.watchDelay.Load())
			if d == 0 || p == nil || len(p.Value) == 0 {
				send(p)
				continue
			}
			wg.Go(func() {
				t := time.NewTimer(d)
				defer t.Stop()
				select {
				case <-t.C:
					send(p)
				case <-ctx.Done():
				}
			})
		}
	}()
	return out, nil
}

// awaitWrite waits (in bubble time) until a write through s lands.
func (s *faultStore) awaitWrite() {
	for before := s.wroteAt.Load(); s.wroteAt.Load() == before; {
		time.Sleep(time.Millisecond)
	}
}

// lastWrite is when the last write through s landed.
func (s *faultStore) lastWrite() time.Time { return time.Unix(0, s.wroteAt.Load()) }

// followInBackground starts a follower of key "k" of h without waiting for
// FollowElection to return (it returns once the first read has answered
// and the watch is open); the function returned waits for it and gives
// the leader channel.
func followInBackground(t *testing.T, h *faultStore) func() <-chan string {
	t.Helper()
	f := NewFollower(h, "k")
	t.Cleanup(f.Stop)
	var leaders <-chan string
	followed := make(chan error, 1)
	go func() {
		var err error
		leaders, _, err = f.FollowElection()
		followed <- err
	}()
	return func() <-chan string {
		t.Helper()
		if err := <-followed; err != nil {
			t.Fatal(err)
		}
		return leaders
	}
}

// simName is a memory backend name of its own for one synctest bubble.
func simName(prefix string) string { return fmt.Sprintf("%s-%d", prefix, storeSeq.Add(1)) }

// termSpan records when a term began and ended on the bubble's clock.
type termSpan struct {
	name       string
	token      uint64
	began, end time.Time
	done       chan struct{}
}

// spanOf follows term until it ends.
func spanOf(term Term) *termSpan {
	s := &termSpan{name: "", token: term.Token, began: term.Began, done: make(chan struct{})}
	go func() {
		<-term.Context().Done()
		s.end = time.Now()
		close(s.done)
	}()
	return s
}

// leadsSoon waits (in bubble time) until c leads a term above floor.
func leadsSoon(t *testing.T, c *Candidate, floor uint64, within time.Duration) Term {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if term, ok := c.CurrentTerm(); ok && term.Token > floor {
			return term
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s did not lead a term above %d within %v", c.node, floor, within)
	return Term{}
}

// ledAfter waits until span's term ends, and fails the test unless next
// began after that: two leaders at once otherwise.
func ledAfter(t *testing.T, next Term, span *termSpan) {
	t.Helper()
	<-span.done
	if next.Began.Before(span.end) {
		t.Fatalf("two leaders: %s led term %d until %v, %s term %d from %v (since %s's term began)",
			span.name, span.token, span.end.Sub(span.began), "the next", next.Token, next.Began.Sub(span.began), span.name)
	}
}

// leaderA runs candidate "a" on key "k" of h until the test ends, and
// waits (in bubble time) until it leads its first term.
func leaderA(t *testing.T, h *faultStore, ttl time.Duration) (*Candidate, Term) {
	t.Helper()
	a := startCandidate(t, h, "a", ttl)
	return a, leadsSoon(t, a, 0, time.Second)
}

// takesTermAgain runs candidate node on key "k" of h until the test ends,
// waits (in bubble time) until it leads its first term, and fails the test
// unless that term has the number of first: the store went back under
// first's holder, and node never saw first's term.
func takesTermAgain(t *testing.T, h *faultStore, node string, ttl time.Duration, first Term) Term {
	t.Helper()
	c := startCandidate(t, h, node, ttl)
	term := leadsSoon(t, c, 0, time.Second)
	if term.Token != first.Token {
		t.Fatalf("%s took term %d, want %s's term number %d again", node, term.Token, node, first.Token)
	}
	return term
}

// startCandidate runs candidate node on key "k" of h until the test ends.
func startCandidate(t *testing.T, h *faultStore, node string, ttl time.Duration, opts ...Option) *Candidate {
	t.Helper()
	c := NewCandidate(h, "k", node, ttl, opts...)
	runCandidate(t, c)
	return c
}

// runFollower follows key "k" of h until the test ends, and returns the
// follower and its leader channel.
func runFollower(t *testing.T, h *faultStore) (*Follower, <-chan string) {
	t.Helper()
	f := NewFollower(h, "k")
	leaders, _, err := f.FollowElection()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	return f, leaders
}

// runCandidate starts c and stops it when the test ends.
func runCandidate(t *testing.T, c *Candidate) {
	t.Helper()
	if _, _, err := c.RunForElection(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
}

// rawKey is a plain handle on key "k" of a bubble's backend, past every
// candidate and fault: what a sync tool, an operator or a restore from a
// backup reads and writes.
type rawKey struct {
	t *testing.T
	h *memory.Store
}

// openRawKey opens a rawKey on the backend name, closed when the test ends.
func openRawKey(t *testing.T, name string) *rawKey {
	t.Helper()
	h, err := memory.Open(context.Background(), memory.Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return &rawKey{t: t, h: h}
}

// get reads the value of the key.
func (r *rawKey) get() []byte {
	r.t.Helper()
	p, err := r.h.Get(context.Background(), "k", nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return p.Value
}

// put stores v as the value of the key, whatever is there.
func (r *rawKey) put(v []byte) {
	r.t.Helper()
	if err := r.h.Put(context.Background(), "k", v, nil); err != nil {
		r.t.Fatal(err)
	}
}
