package leadership

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/memory"
)

// indexlessStore is a memory handle that, once armed, answers a landed
// compare-and-swap of the election key with the stored pair but no index
// (LastIndex 0: "some stores report no index"), so that casRecord reads
// back; that read back of the election key waits until gate is closed.
type indexlessStore struct {
	*memory.Store
	armed   atomic.Bool
	putDone chan struct{} // closed when the armed put landed
	gate    chan struct{} // the read back waits for it
	once    sync.Once
	waiting atomic.Bool
}

func (s *indexlessStore) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	ok, p, err := s.Store.AtomicPut(ctx, key, value, prev, opts)
	if !strings.HasSuffix(key, ".standby") && err == nil && ok && p != nil && s.armed.CompareAndSwap(true, false) {
		q := *p
		q.LastIndex = 0
		s.waiting.Store(true)
		s.once.Do(func() { close(s.putDone) })
		return ok, &q, err
	}
	return ok, p, err
}

func (s *indexlessStore) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	if s.waiting.Load() && !strings.HasSuffix(key, ".standby") {
		s.waiting.Store(false)
		select {
		case <-s.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p, err := s.Store.Get(ctx, key, opts)
	return p, err
}

// A candidate that stops never starts a term handed to it meanwhile (found
// by review: its release's read back showed a record handed to it, and
// the term started inside Stop and outlived it, beside another leader).
// On a store whose compare-and-swap answers without an index, so that a
// release is read back.
func TestStandbyNoTermStartsDuringStop(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "k", time.Minute
	h := c.handle()

	l := NewCandidate(c.handle(), key, "L", ttl, WithStandby())
	t.Cleanup(l.Stop)
	if _, err := l.Campaign(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// D claims first, then C: the claim key holds C's claim when L stops.
	d := NewCandidate(c.handle(), key, "D", ttl, WithStandby(), WithResignHoldoff(0))
	t.Cleanup(d.Stop)
	dEl, _, err := d.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "D's claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name == "D" })
	cs := &indexlessStore{Store: c.handle(), putDone: make(chan struct{}), gate: make(chan struct{})}
	cand := NewCandidate(cs, key, "C", ttl, WithStandby())
	t.Cleanup(cand.Stop)
	if _, _, err := cand.RunForElection(); err != nil {
		t.Fatal(err)
	}
	var cClaim claim
	eventually(t, "C's claim", func() bool { var ok bool; cClaim, ok = standbyClaimOf(t, h, key); return ok && cClaim.Name == "C" })

	l.Stop() // hands the next term to C
	eventually(t, "C leads the handed term", cand.IsLeader)
	eventually(t, "C renewed the handed term", func() bool { r := recordOf(t, h, key); return r.Leader == "C" && r.Claim == "" })
	x := watchExclusion(t, cand, d)

	cs.armed.Store(true)
	stopped := make(chan struct{})
	go func() { cand.Stop(); close(stopped) }()
	<-cs.putDone // C's release landed; its read back waits
	recvUntil(t, dEl, "D takes the free record", func(v bool) bool { return v })
	d.Resign() // D hands the next term to the claim in the key: C's
	eventually(t, "a record handed to C", func() bool {
		r := recordOf(t, h, key)
		return r.Leader == "C" && r.Claim == cClaim.Nonce
	})
	close(cs.gate)
	<-stopped
	t.Logf("after C.Stop: C.IsLeader=%v record=%+v", cand.IsLeader(), recordOf(t, h, key))
	if cand.IsLeader() {
		t.Errorf("C leads after its Stop returned")
	}
	// D (holdoff 0) takes the record C freed.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && !(d.IsLeader() && cand.IsLeader()) {
		time.Sleep(time.Millisecond)
	}
	if d.IsLeader() && cand.IsLeader() {
		t.Errorf("two leaders: C (stopped) and D")
	}
	x.check(t)
}

// The documented limit of the claim watch, a hint: a late watch event (the
// Backend contract allows late and reordered events) leaves the leader on
// a claim its candidate withdrew when it stopped. The leader's Stop hands
// the term to the stopped candidate, and the live standby takes over one
// TTL later, as after a crash: no sooner, and not much later.
func TestStandbyStaleClaimCostsOneTTL(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "k", 2 * time.Second
	h := c.handle()
	lh := newFaultStore(t, c.name)
	l := NewCandidate(lh, key, "L", ttl, WithStandby())
	t.Cleanup(l.Stop)
	if _, err := l.Campaign(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	lh.watchDelay.Store(int64(300 * time.Millisecond)) // values late, deletes at once
	d := NewCandidate(c.handle(), key, "D", ttl, WithStandby(), WithRenewInterval(1500*time.Millisecond))
	t.Cleanup(d.Stop)
	dEl, _, err := d.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "D's claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name == "D" })
	dFirst, _ := standbyClaimOf(t, h, key)
	cand := NewCandidate(c.handle(), key, "C", ttl, WithStandby())
	if _, _, err := cand.RunForElection(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "C's claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name == "C" })
	cand.Stop() // withdraws its claim
	noStandbyClaim(t, h, key, "C's claim not withdrawn")
	// D claims again; L stops before that claim's (late) event reaches it.
	eventually(t, "D's next claim", func() bool {
		cl, ok := standbyClaimOf(t, h, key)
		return ok && cl.Name == "D" && cl.Nonce != dFirst.Nonce
	})
	stopped := time.Now()
	l.Stop()
	rec := recordOf(t, h, key)
	cl, _ := standbyClaimOf(t, h, key)
	t.Logf("record after L.Stop: leader %q claim %q; claim key holds %s's", rec.Leader, rec.Claim, cl.Name)
	recvUntil(t, dEl, "D leads", func(v bool) bool { return v })
	if took := time.Since(stopped); rec.Leader == "C" && (took < ttl-50*time.Millisecond || took > ttl+wait/2) {
		t.Errorf("D led %v after L's Stop handed the term to the stopped C (TTL %v)", took, ttl)
	}
}

// slowStore answers every Get and AtomicPut after delay, once armed; a call
// whose context ends first is not applied.
type slowStore struct {
	*memory.Store
	delay atomic.Int64
}

func (s *slowStore) wait(ctx context.Context) error {
	d := time.Duration(s.delay.Load())
	if d == 0 || waitCtx(ctx, d) {
		return nil
	}
	return ctx.Err()
}

func (s *slowStore) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Store.Get(ctx, key, opts)
}

func (s *slowStore) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if err := s.wait(ctx); err != nil {
		return false, nil, err
	}
	return s.Store.AtomicPut(ctx, key, value, prev, opts)
}

// Stop's release runs under one request timeout; with WithStandby and no
// usable cached claim (here the other candidate does not claim standby,
// which the option allows), the release first reads the claim key, in a
// quarter of that budget. A store answering in 60% of the request timeout
// still gets the release (found by review: the read took the release's
// time, and the other candidate waited a whole TTL).
func TestStandbyStopReleaseBudget(t *testing.T) {
	for _, standby := range []bool{false, true} {
		t.Run(map[bool]string{false: "without", true: "with"}[standby], func(t *testing.T) {
			c := newCluster(t)
			const key, ttl = "k", 3 * time.Second // request timeout 1s
			ah := &slowStore{Store: c.handle()}
			var opts []Option
			if standby {
				opts = append(opts, WithStandby())
			}
			a := NewCandidate(ah, key, "A", ttl, opts...)
			t.Cleanup(a.Stop)
			if _, err := a.Campaign(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			b := NewCandidate(c.handle(), key, "B", ttl)
			t.Cleanup(b.Stop)
			bEl, _, err := b.RunForElection()
			if err != nil {
				t.Fatal(err)
			}
			ah.delay.Store(int64(600 * time.Millisecond))
			time.Sleep(1500 * time.Millisecond) // A renews through the slow store
			if !a.IsLeader() {
				t.Fatal("A lost its lease on the slow store")
			}
			stopped := time.Now()
			a.Stop()
			if r := recordOf(t, c.handle(), key); r.Leader == "A" {
				t.Errorf("after A's Stop the record still names A (term %d): the release was abandoned", r.Term)
			}
			recvUntil(t, bEl, "B leads", func(v bool) bool { return v })
			took := time.Since(stopped)
			t.Logf("B led %v after A's Stop", took)
		})
	}
}

// WithResignHoldoff: a candidate that resigned leaves the election to the
// others for the holdoff before it competes again, and claims no standby
// meanwhile, so a successor that stops within the holdoff hands its term
// to the third candidate, not back (found by review).
func TestStandbyHonoursResignHoldoff(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "k", 4 * time.Second // holdoff 1s
	h := c.handle()
	rs, _ := standbyRunners(t, c, key, ttl, 3)
	a := rs[0]
	eventually(t, "a claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name != a.name })
	resigned := time.Now()
	a.Resign()
	x := leaderAmong(t, "a successor", rs[1:])
	eventually(t, "A's claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name == a.name })
	x.Stop()
	leaderAmong(t, "a leader after the successor's Stop", except(rs, x))
	if a.IsLeader() && time.Since(resigned) < time.Second {
		t.Errorf("%s leads again %v after resigning, within its holdoff of 1s, while %s waited",
			a.name, time.Since(resigned), except(rs[1:], x)[0].name)
	}
}

// hangClaimStore hangs every call on the claim key, ignoring its context,
// until released.
type hangClaimStore struct {
	*memory.Store
	hang     atomic.Bool
	released chan struct{}
}

func (s *hangClaimStore) block(key string) {
	if s.hang.Load() && strings.HasSuffix(key, ".standby") {
		<-s.released
	}
}

func (s *hangClaimStore) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	s.block(key)
	return s.Store.Get(ctx, key, opts)
}

func (s *hangClaimStore) AtomicPut(ctx context.Context, key string, value []byte, prev *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	s.block(key)
	return s.Store.AtomicPut(ctx, key, value, prev, opts)
}

func (s *hangClaimStore) AtomicDelete(ctx context.Context, key string, prev *store.KVPair) (bool, error) {
	s.block(key)
	return s.Store.AtomicDelete(ctx, key, prev)
}

func (s *hangClaimStore) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	s.block(key)
	return s.Store.Watch(ctx, key, opts)
}

// Stop stays bounded when every call on the claim key hangs (the leader's
// claim watcher reopening, its release's read, a waiter's claim and
// withdrawal).
func TestStandbyStopWithHungClaimKey(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "k", 3 * time.Second // request timeout 1s
	ah := &hangClaimStore{Store: c.handle(), released: make(chan struct{})}
	bh := &hangClaimStore{Store: c.handle(), released: make(chan struct{})}
	t.Cleanup(func() { close(ah.released); close(bh.released) })
	a := NewCandidate(ah, key, "A", ttl, WithStandby())
	if _, err := a.Campaign(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	b := NewCandidate(bh, key, "B", ttl, WithStandby())
	bEl, _, err := b.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	ah.hang.Store(true)
	bh.hang.Store(true)
	time.Sleep(1500 * time.Millisecond)
	began := time.Now()
	a.Stop()
	t.Logf("A.Stop took %v", time.Since(began))
	if d := time.Since(began); d > 2500*time.Millisecond {
		t.Errorf("A.Stop took %v", d)
	}
	recvUntil(t, bEl, "B leads", func(v bool) bool { return v })
	t.Logf("B leads %v after A.Stop began", time.Since(began))
	began = time.Now()
	b.Stop()
	t.Logf("B.Stop took %v", time.Since(began))
	if d := time.Since(began); d > 2500*time.Millisecond {
		t.Errorf("B.Stop took %v", d)
	}
}
