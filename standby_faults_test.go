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
	// D resigns (its release is free: it saw C's term consume C's claim),
	// and a leader that never saw C's term hands the next term to the
	// claim in the key, C's, over whatever the record is then.
	d.Resign()
	recvUntil(t, dEl, "D steps down", func(v bool) bool { return !v })
	eventually(t, "a record handed to C", func() bool {
		s, err := readKey(ctxT(t), h, key)
		if err != nil {
			t.Fatal(err)
		}
		handed := record{Leader: "C", ID: cClaim.ID, Term: s.rec.Term + 1, TTLms: cClaim.TTLms, Gen: s.rec.Gen, Claim: cClaim.Nonce}
		ok, _, err := h.AtomicPut(ctxT(t), key, handed.Stamp(), s.pair, nil)
		return err == nil && ok
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

// A store restored from a backup: the backup's record names L, a standby
// candidate that led before X and is still running (waiting). X, the
// leader whose record the restore erased, is cut off from the store and
// leads, as it may, until its own deadline. L reads the restored record
// (the store went back in time) and stops. Were finish to take the
// restored record, which names L, for a term of its own and hand it to
// C's claim, the next term would be numbered above every term L saw, so
// above X's; C saw X's record, its watch delivers the restore late, and
// its read would show L's handed record, newer than anything C saw:
// nothing would tell C that the store went back, and C would lead at once,
// beside X. A release hands on only a term its candidate led: L's Stop
// writes a free record of the restored term, which C takes for what it is
// (older than X's record: the store went back), and C waits out X's lease.
func TestStandbyNeverHandsOverARecordItOnlyRead(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "k", 4 * time.Second // renew 1.33s, margin 400ms, request timeout 1.33s
	h := c.handle()

	// L leads term 1; the backup holds its record.
	l := NewCandidate(c.handle(), key, "L", ttl, WithStandby(), WithResignHoldoff(time.Minute))
	t.Cleanup(l.Stop)
	if _, err := l.Campaign(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	backup, err := h.Get(ctxT(t), key, nil)
	if err != nil {
		t.Fatal(err)
	}

	// X (no standby: it never claims) takes over when L resigns; L then
	// leaves the election to the others for its (long) holdoff, and
	// claims nothing meanwhile.
	xh := newFaultStore(t, c.name)
	x := NewCandidate(xh, key, "X", ttl)
	t.Cleanup(x.Stop)
	xEl, _, err := x.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	l.Resign()
	recvUntil(t, xEl, "X leads", func(v bool) bool { return v })

	// C, a standby candidate whose watch events come late, sees X's
	// record and claims standby.
	ch := newFaultStore(t, c.name)
	ch.watchDelay.Store(int64(300 * time.Millisecond))
	cand := NewCandidate(ch, key, "C", ttl, WithStandby())
	t.Cleanup(cand.Stop)
	if _, _, err := cand.RunForElection(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "C's claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name == "C" })
	eventually(t, "C names X", func() bool { return cand.Leader() == "X" })
	time.Sleep(50 * time.Millisecond) // L's claim watch delivers C's claim

	// X renews, then is cut off: it leads until its deadline.
	xh.awaitWrite()
	xh.Disconnect()
	xTerm, ok := x.CurrentTerm()
	if !ok {
		t.Fatal("X does not lead")
	}
	ex := watchExclusion(t, x, cand)

	// The store is restored from the backup: X's record is gone.
	if err := h.Put(context.Background(), key, backup.Value, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, "L sees the store go back (names no one)", func() bool { return l.Leader() == "" })
	l.Stop()
	rec := recordOf(t, h, key)
	t.Logf("record after L's Stop: leader %q term %d claim %q (X's term %d)", rec.Leader, rec.Term, rec.Claim, xTerm.Token)

	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if cand.IsLeader() && x.IsLeader() {
			ct, _ := cand.CurrentTerm()
			t.Fatalf("two leaders: C leads term %d (handed by L's Stop over the restored record) while X, cut off, still leads term %d",
				ct.Token, xTerm.Token)
		}
		time.Sleep(time.Millisecond)
	}
	ex.check(t)
}

// "A claim not written again for two of its claimant's intervals (plus a
// request timeout) is not used: the release frees the record." A claim
// already in the key when the leader's claim watch opened has an unknown
// age: dated from when the watch learned it, a claim whose candidate
// vanished long ago would pass for a fresh one, the leader would hand its
// term to the gone candidate and the live one would wait a whole TTL.
func TestStandbyClaimOfUnknownAgeIsNotUsed(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "k", 500 * time.Millisecond // claim every 166ms, request timeout 166ms
	h := c.handle()

	// A leads (no standby: it never claims and its release is free).
	a := NewCandidate(c.handle(), key, "A", ttl)
	t.Cleanup(a.Stop)
	if _, err := a.Campaign(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	// The ghost claims standby, then vanishes, its claim left behind.
	gone := c.handle()
	runningStandby(t, gone, key, "ghost", ttl)
	eventually(t, "the ghost's claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name == "ghost" })
	gone.Disconnect()
	vanished := time.Now()
	cl, _ := standbyClaimOf(t, h, key)
	// Ten of the ghost's intervals: long dead by any reading of the rule.
	time.Sleep(10 * cl.Every())
	a.Stop() // a free release

	// L, with standby, leads its first term; the claim key still holds
	// the ghost's old claim.
	l := leadingStandby(t, c.handle(), key, "L", ttl)
	last := NewCandidate(c.handle(), key, "last", ttl) // no standby: never claims
	t.Cleanup(last.Stop)
	el, _, err := last.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	if cl2, _ := standbyClaimOf(t, h, key); cl2.Nonce != cl.Nonce {
		t.Fatalf("the claim key changed: %+v", cl2)
	}
	time.Sleep(50 * time.Millisecond) // L's claim watch opened and read the key
	stopped := time.Now()
	l.Stop()
	rec := recordOf(t, h, key)
	recvUntil(t, el, "the last candidate leads", func(v bool) bool { return v })
	took := time.Since(stopped)
	if rec.Leader == "ghost" {
		t.Fatalf("L's Stop handed its term to the ghost, whose claim was last written over %v before (its interval %v); the last candidate led %v later (TTL %v)",
			stopped.Sub(vanished).Round(time.Millisecond), cl.Every(), took.Round(time.Millisecond), ttl)
	}
}

// "A candidate in its resign holdoff claims nothing", so that no term is
// handed back to it before the holdoff ends; but a claim it wrote before
// its term is still in the claim key when it resigns (it was handed the
// term for that very claim). Its successor, which leads its first term
// and finds that claim, stops: the candidate must not lead again inside
// its holdoff (Resign: "competes again after WithResignHoldoff"), neither
// by a term handed for a claim of before its own term nor while the
// holdoff lasts.
func TestStandbyNoTermHandedBackInTheHoldoff(t *testing.T) {
	c := newCluster(t)
	const key, ttl = "k", 4 * time.Second // holdoff 1s, claims every 1.33s
	h := c.handle()
	l := leadingStandby(t, c.handle(), key, "L", ttl)
	b := NewCandidate(c.handle(), key, "B", ttl, WithStandby())
	t.Cleanup(b.Stop)
	bEl, _, err := b.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "B's claim", func() bool { cl, ok := standbyClaimOf(t, h, key); return ok && cl.Name == "B" })
	a := NewCandidate(c.handle(), key, "A", ttl, WithStandby())
	t.Cleanup(a.Stop)
	aEl, _, err := a.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	var aClaim claim
	eventually(t, "A's claim", func() bool { var ok bool; aClaim, ok = standbyClaimOf(t, h, key); return ok && aClaim.Name == "A" })
	time.Sleep(20 * time.Millisecond) // L's claim watch delivers it
	l.Resign()                        // hands the term to A's claim
	recvUntil(t, aEl, "A leads", func(v bool) bool { return v })
	resigned := time.Now()
	a.Resign() // the claim key still holds A's own claim: a free release
	recvUntil(t, aEl, "A steps down", func(v bool) bool { return !v })
	recvUntil(t, bEl, "B takes the free record", func(v bool) bool { return v })
	time.Sleep(20 * time.Millisecond) // B's claim watch opened and read the key
	b.Stop()
	handed := recordOf(t, h, key)
	cl, _ := standbyClaimOf(t, h, key)
	t.Logf("record after B's Stop: leader %q term %d; the claim key holds %s's claim %q (A's first: %q)", handed.Leader, handed.Term, cl.Name, cl.Nonce, aClaim.Nonce)
	for time.Since(resigned) < 900*time.Millisecond {
		if a.IsLeader() {
			t.Fatalf("A leads term %d (handed by B's Stop for A's claim %q, written before A's own term) %v after resigning, within its holdoff of 1s",
				handed.Term, aClaim.Nonce, time.Since(resigned).Round(time.Millisecond))
		}
		time.Sleep(time.Millisecond)
	}
}
