package leadership

// The simulator's invariant checker. The fault-injecting store tells it
// every write it applies, every value it shows a participant and every call;
// the driver tells it every term it finds, every follower observation, every
// store-level fault, and asks it to check after every step. All times are
// the bubble's virtual time, which is exact: a goroutine woken at an instant
// runs at that instant. Times a participant reports (Term.Began,
// Status.At) are on its own clock and are mapped back to virtual time;
// a paused participant does nothing, so what it does at its resume (a term
// whose deadline passed meanwhile ends then) counts from its pause's start.
//
// The invariants, precisely:
//
//  1. Mutual exclusion. A term's leading interval is [Term.Began, the
//     instant its Context is done). One exception, the documented
//     limitation of a store that loses acknowledged data (docs/semantics.md,
//     section 7): a later term may overlap an earlier one when the store
//     lost its data, was restored, or applied a compare-and-swap over a
//     reused index between the two terms' starts, and the later term's
//     candidate was never shown (by a read, a watch event or a write's
//     reply) a record with a term as high as the earlier one's: nothing it
//     could observe told it of that leader. Terms are found by Run's
//     OnStartedLeading, by reading the elected channel then CurrentTerm, and
//     by CurrentTerm at every driver step (a term that begins and ends
//     between two steps of a candidate whose channel is not read can be
//     missed). No two terms' intervals overlap, and at every driver step at
//     most one candidate has IsLeader() true.
//  2. Fencing tokens. Within an epoch (the key's life between two deletions
//     by DeleteElection, after which tokens restart by design), a term's
//     token is greater than the token of every term that began before it.
//     One exception, the documented limitation of a store that goes back in
//     time: a term of candidate C may have a token no greater than that of
//     an earlier term U when the store lost its data or was restored from a
//     backup after U's record was written, C had been shown no record at all
//     before that (it was created after the loss, or had not read the key
//     yet), and C was never shown (by a read, a watch event or a write's
//     reply) a record with a term as high as U's. "Before" is the order in
//     which the checker saw the events, exact even within one instant.
//     The same limitation seen from the other side: a term U may have a
//     token no greater than that of a term of candidate C that began before
//     it when the store applied U's acquire before C's (U's candidate
//     learned of its success only after C's term began: a delayed reply),
//     the store went back in time between the two acquires, and C was never
//     shown a term as high as U's before its term began. The store lost a
//     token it had already issued, and C numbered its term without having
//     been shown it.
//     A violation is reported as "tokens-unseen" when C was never shown U's
//     term and the store went back in time (a loss, a restore, or a write
//     that made the record older by matching a reused index) between the
//     two terms: the wider limitation that a candidate which lived through
//     the loss but never saw the newest term cannot number above it. Every
//     other violation is "tokens".
//  3. Followers, bound by the holder's lease. Every write naming H as
//     holder in term T has a lease bound: for H's own write, sent at s and
//     applied at a, the virtual time at which H's clock has advanced TTL
//     from its reading at s, plus a - s (the time it took to reach the
//     store, which no follower can know); for an identical rewrite, the
//     bound of the write it repeats if F had been shown that value before,
//     else the rewrite's time + TTL (news to F); for a restore, its time +
//     TTL (section 7). A follower F started at start(F) may name (H,T) at
//     time t only if, for the latest of H's own writes naming (H,T) applied
//     by t or a restore or rewrite after it,
//     t <= max(bound, start(F) + TTL) + slack + held, where held is how
//     long a partition or pause of F or an outage of the server that ended
//     by t held that write back (watch events buffered during a cut arrive
//     at its end, as TCP delivers them, and no follower can tell them from
//     live ones), and slack is the longest the plan may hold a watch event
//     (start(F): the documented limitation that a follower started after a
//     crash counts from its first read). Besides, F never names (H,T) after it named a later term unless
//     the store went back in time in between, and never after a read
//     returned to it showed the key missing, unless the store applied a
//     write naming (H,T) after that read.
//  4. Liveness. Once the run is calm (faults off, partitions healed, hangs
//     released, no store-level fault or admin call under way, every slot
//     running) for livenessBound = 3 x maxTTL + maxTTL/3 + 1s (three TTLs,
//     a poll, the longest retry backoff), some candidate has IsLeader()
//     true at every driver step until the calm phase ends.
//  5. No storms. No participant makes more than stormLimit store calls in
//     any second of virtual time.
//  6. Stop (or cancelling the run's context) returns, with Done closed,
//     within 2 x the request timeout + stopMargin, even when the store
//     hangs.
//  7. Fenced writes. A FencedPut through term T of candidate C lands only
//     while the record at the election key names C as holder in term T
//     (not free, not ended): no fenced write of T is applied once another
//     term was written over T's record. Strict: a store that lost its data
//     and handed the guard's index out again is no excuse (issue 23, item
//     3; the failure says whether that happened).
//  8. The run window. When the store applies a write that takes a term over
//     from another holder's record (held or ended, not free), the gap from
//     the end of that holder's term (its Context done, or the start of the
//     pause in which its deadline passed) to the write is at least
//     min(margin, TTL/rate(taker) - (TTL - margin)/rate(holder)): the
//     holder's whole margin, less only what the two clocks' rates explain.
//     Not checked when the store went back in time since the holder's term
//     began (invariant 1's exception).
//  9. The holdoff. A candidate whose release (Resign, a relinquish, a
//     HandOff) the store applied does not take the record it freed back
//     before its clock has advanced its ResignHoldoff (for a HandOff to
//     another, its TTL plus the holdoff) from the release's application:
//     it cannot have seen the release any sooner, whether or not the
//     release's reply reached it. Not checked for a release that took the
//     store back in time (a late write over a reused index).
// 10. The end. A candidate that was shown the key (a record, or the key
//     missing) before the store applied an ended record written by
//     EndElection or DeleteElection never takes that record over: it
//     belonged to the election that ended. (One started after the end, whose
//     first view is the ended record, opens a new election on the key.)
//     Not checked when the store went back in time (lost or restored its
//     data) in between: an end written over the older record can repeat
//     the generation of an end the candidate saw before.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// Limits of the invariants.
const (
	stormLimit = 200                    // store calls per participant per second
	stopMargin = 250 * time.Millisecond // on top of 2 x the request timeout
	historyLen = 64                     // applied values kept for restores
)

// simKind says what a participant is.
type simKind int

const (
	kindCandidate simKind = iota
	kindFollower
	kindAdmin
)

// simWitness is what the checker knows of one participant: one incarnation
// of a candidate or follower, or the admin that ends elections.
type simWitness struct {
	label    string
	name     string // the node name it runs under ("c0", "f1", "admin")
	kind     simKind
	started  time.Time
	clk      *simClock     // its clock (rate, offset, pauses)
	ttl      time.Duration // a candidate's TTL
	margin   time.Duration // a candidate's safety margin
	holdoff  time.Duration // a candidate's ResignHoldoff
	viewFrom time.Time     // when it was first shown the key (a record, or the key missing); zero: never

	shown   []simShown           // rises of the highest term shown to it
	first   uint64               // sequence number of the first record shown to it, 0 if none
	missing []time.Time          // when reads returned to it showed the key missing (the read's time)
	missAt  []time.Time          // when those reads returned
	calls   []time.Time          // its store calls in the last second
	stormed bool                 // a storm was reported
	values  map[string]time.Time // a follower: when it was first shown each value
	named   *simNaming           // what a follower names now
	highest *simNaming           // the highest term a follower named
}

// simShown is a rise of the highest term shown to a participant.
type simShown struct {
	at    time.Time
	term  uint64
	how   string // "get", "put" or "watch"
	epoch int    // the key's life it was shown in (terms restart after DeleteElection)
}

// simNaming is a follower's observation as the checker keeps it.
type simNaming struct {
	Status
}

// maxShownBefore is the highest term shown to w before t, and how and
// when it was shown.
func (w *simWitness) maxShownBefore(t time.Time) simShown {
	var m simShown
	for _, s := range w.shown {
		if !s.at.Before(t) {
			break
		}
		if s.term > m.term {
			m = s
		}
	}
	return m
}

// maxShownInEpoch is maxShownBefore counting only what was shown in the
// key's life epoch.
func (w *simWitness) maxShownInEpoch(t time.Time, epoch int) simShown {
	var m simShown
	for _, s := range w.shown {
		if !s.at.Before(t) {
			break
		}
		if s.epoch == epoch && s.term > m.term {
			m = s
		}
	}
	return m
}

// simTerm is one term found, with its leading interval.
type simTerm struct {
	who      *simWitness
	token    uint64
	start    time.Time
	end      time.Time // zero while it lasts
	endKnown bool      // false when it was found only after it ended
	dirty    bool      // new or changed since the last check
	epoch    int
}

// simHolder names a holder in a term.
type simHolder struct {
	name string
	term uint64
}

// simApply is one applied write naming a holder.
type simApply struct {
	at    time.Time
	ttl   time.Duration
	seq   uint64
	bound time.Time // how long a follower may name the holder on this write: its lease (invariant 3)
	// An identical rewrite extends nothing for a follower that was shown
	// the value before; to one that was not, it is news of a record.
	value   string
	rewrite bool
	engine  bool      // written by a participant (not restored or rewritten by the driver)
	fresh   time.Time // the write's time + TTL
}

// simTakeover is a write that took a term over from another holder's
// record (not a free one): the run window's check waits for the end of
// the holder's term (invariant 8).
type simTakeover struct {
	at         time.Time // when the store applied it
	by         *simWitness
	prevLeader string
	prevTerm   uint64
	prevTTL    time.Duration
	term       uint64
}

// simGoBack is a moment the store went back in time.
type simGoBack struct {
	at   time.Time
	kind string // "loss", "restore", "delete"
	seq  uint64
}

// simViolation is one broken invariant.
type simViolation struct {
	at        time.Duration // since the start of the run
	invariant string
	detail    string
}

// simChecker holds everything the invariants are judged on.
type simChecker struct {
	mu    sync.Mutex
	run   *simRun
	slack time.Duration
	cuts  []simCut // partitions and outages

	applies   map[simHolder][]simApply
	bounds    map[string]time.Time // an engine write's value: its bound (for identical rewrites)
	takeovers []simTakeover
	fences    int         // fenced writes that landed
	history   [][]byte    // the latest applied values
	lastIndex uint64      // index of the latest applied write
	current   []byte      // the value at the key as the checker knows it, nil when missing
	freedBy   *simWitness // the candidate whose release current is, or nil
	freedAt   time.Time   // freedBy's clock when the store applied that release (after a HandOff: plus its TTL)
	endedAt   time.Time   // when the store applied current, an ended record of the admin's; zero if current is not one
	goBacks   []simGoBack
	epoch     int
	terms     []*simTerm
	byLease   map[simTermKey]*simTerm

	violations []simViolation
	tail       []string             // the event log when the first violation was found
	pairs      map[[2]*simTerm]bool // pairs of terms already reported
	calls      int
	seq        uint64 // orders applies, shows and go-backs, even within one instant
}

type simTermKey struct {
	who   *simWitness
	token uint64
}

func newSimChecker(r *simRun, slack time.Duration) *simChecker {
	return &simChecker{run: r, slack: slack, applies: map[simHolder][]simApply{}, byLease: map[simTermKey]*simTerm{},
		pairs: map[[2]*simTerm]bool{}, bounds: map[string]time.Time{}}
}

// fail records a violation; the first one keeps the event log's tail.
func (c *simChecker) fail(invariant, format string, args ...any) {
	v := simViolation{at: c.run.since(), invariant: invariant, detail: fmt.Sprintf(format, args...)}
	c.run.logf("VIOLATION %s: %s", invariant, v.detail)
	if len(c.violations) == 0 {
		c.tail = c.run.log.tail()
	}
	c.violations = append(c.violations, v)
}

// call counts a store call of w and reports whether it is part of a storm
// (invariant 5), so that the wrapper slows it down.
func (c *simChecker) call(w *simWitness) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	now := time.Now()
	i := 0
	for i < len(w.calls) && !w.calls[i].After(now.Add(-time.Second)) {
		i++
	}
	w.calls = append(w.calls[i:], now)
	if len(w.calls) <= stormLimit {
		return false
	}
	if !w.stormed {
		w.stormed = true
		c.fail("no-storms", "%s made %d store calls within one second", w.label, len(w.calls))
	}
	return true
}

// applied records a write the store applied: sent by w at sent ("engine"),
// or put by the driver ("restore", "rewrite").
func (c *simChecker) applied(w *simWitness, pair *store.KVPair, sent time.Time, how string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.run.logf("%s: applied %s", w.label, c.run.describe(pair))
	c.lastIndex = pair.LastIndex
	now := time.Now()
	if d := c.run.decode(pair.Value); how == "engine" && c.current != nil && d.ok && !d.rec.Free() && !d.rec.Ended {
		if p := c.run.decode(c.current); p.ok && !p.rec.Free() && p.rec.ID != d.rec.ID && p.rec.Term < d.rec.Term {
			c.takeovers = append(c.takeovers, simTakeover{at: now, by: w, prevLeader: p.rec.Leader, prevTerm: p.rec.Term, prevTTL: p.rec.TTL(), term: d.rec.Term})
		}
	}
	c.checkEnd(w, pair.Value, how, now)
	back := false
	if c.current != nil {
		// A compare-and-swap that matched a reused index (a write sent
		// before the store lost its data, applied after) or a restore can
		// make the record older: the store went back in time. So does a
		// term that goes down (an end written from a view older than the
		// record it replaced, over a reused index).
		if old, now := c.run.decode(c.current), c.run.decode(pair.Value); old.ok && now.ok &&
			(!now.rec.NewerThan(&old.rec) || now.rec.Term < old.rec.Term) && now.rec.Token != old.rec.Token {
			c.seq++
			c.goBacks = append(c.goBacks, simGoBack{at: time.Now(), kind: "older write", seq: c.seq})
			c.run.logf("the store went back in time: %s over %s", now.desc, old.desc)
			back = true
		}
	}
	c.checkHoldoff(w, pair.Value, how, back, now)
	c.current = pair.Value
	c.history = append(c.history, pair.Value)
	if len(c.history) > historyLen {
		c.history = c.history[1:]
	}
	d := c.run.decode(pair.Value)
	rec := d.rec
	if !d.ok || rec.Free() || rec.Ended {
		return
	}
	h := simHolder{rec.Leader, rec.Term}
	c.seq++
	c.applies[h] = append(c.applies[h], simApply{at: now, ttl: rec.TTL(), seq: c.seq, bound: c.leaseBound(w, pair.Value, rec.TTL(), sent, how),
		value: string(pair.Value), rewrite: how == "rewrite", engine: how == "engine", fresh: now.Add(rec.TTL())})
}

// checkEnd checks invariant 10 for a write of v by w applied now, and
// notes whether v is an ended record of the admin's.
func (c *simChecker) checkEnd(w *simWitness, v []byte, how string, now time.Time) {
	d := c.run.decode(v)
	if !c.endedAt.IsZero() && how == "engine" && w.kind == kindCandidate && d.ok && !d.rec.Free() && !d.rec.Ended &&
		!w.viewFrom.IsZero() && w.viewFrom.Before(c.endedAt) && !c.wentBackBetween(w.viewFrom, c.endedAt) {
		c.fail("end", "%s took over the record that ended its election (applied %v after it; %s was shown the key %v before it)",
			w.label, now.Sub(c.endedAt), w.label, c.endedAt.Sub(w.viewFrom))
	}
	c.endedAt = time.Time{}
	if how == "engine" && w.kind == kindAdmin && d.ok && d.rec.Ended {
		c.endedAt = now
	}
}

// checkHoldoff checks invariant 9 for a write of v by w applied now, and
// notes whether v is a release of w's. A write that took the store back
// in time (back) frees nothing the checker holds anyone to: a candidate
// that led when the store went back may take the record at once.
func (c *simChecker) checkHoldoff(w *simWitness, v []byte, how string, back bool, now time.Time) {
	d := c.run.decode(v)
	if by := c.freedBy; by != nil && by == w && how == "engine" && d.ok && !d.rec.Free() && !d.rec.Ended {
		if due := w.clk.realOf(c.freedAt.Add(w.holdoff)); now.Before(due) {
			c.fail("holdoff", "%s took back the record it freed %v before its holdoff of %v on its clock ended",
				w.label, due.Sub(now), w.holdoff)
		}
	}
	c.freedBy = nil
	if back || how != "engine" || !d.ok || !d.rec.Free() || d.rec.Ended || w.kind != kindCandidate {
		return
	}
	c.freedBy, c.freedAt = w, w.clk.localAt(now)
	if d.rec.Successor != "" && d.rec.Successor != w.name {
		c.freedAt = c.freedAt.Add(w.ttl) // the successor's window first
	}
}

// leaseBound is how long followers may name the holder of a write applied
// now (invariant 3): for the holder's own write, its lease as the holder
// counts it (the TTL on its clock from when it sent the write) mapped to
// virtual time, plus the time the write took to reach the store (no
// follower can know when it was sent); for an identical rewrite, the bound
// of the write it repeats; for a restored record, the TTL from now (a
// follower that never saw a newer record cannot tell it from a new write,
// the limitation of section 7).
func (c *simChecker) leaseBound(w *simWitness, v []byte, ttl time.Duration, sent time.Time, how string) time.Time {
	now := time.Now()
	b := now.Add(ttl)
	switch how {
	case "engine":
		b = w.clk.realOf(w.clk.localAt(sent).Add(ttl)).Add(now.Sub(sent))
	case "rewrite":
		if old, ok := c.bounds[string(v)]; ok {
			b = old
		}
	}
	c.bounds[string(v)] = b
	return b
}

// fenced records a fenced write that landed now, and checks invariant 7:
// it landed while the record at the election key was the one of the term
// it was made through (v is "label/t<token>/n").
func (c *simChecker) fenced(w *simWitness, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fences++
	var token uint64
	if _, rest, ok := strings.Cut(v, "/t"); ok {
		n, _, _ := strings.Cut(rest, "/")
		fmt.Sscan(n, &token)
	}
	cur := "missing"
	if c.current != nil {
		d := c.run.decode(c.current)
		cur = d.desc
		if d.ok && !d.rec.Free() && !d.rec.Ended && d.rec.Leader == w.name && d.rec.Term == token {
			c.run.logf("%s: fenced write %s landed (the record holds term %d)", w.label, v, token)
			return
		}
	}
	// The known hole of issue 23 (item 3): a guard that compares the
	// store's index only, over a store that lost its data and handed the
	// index out again.
	began := time.Time{}
	if t, ok := c.byLease[simTermKey{w, token}]; ok {
		began = t.start
	}
	lost := false
	for _, g := range c.goBacks {
		if g.kind == "loss" && !g.at.Before(began) {
			lost = true
		}
	}
	c.fail("fenced", "%s's fenced write %s of term %d landed while the record was %s (the store lost its data since the term began: %v)",
		w.label, v, token, cur, lost)
}

// shown records a value a participant was shown, by how ("get", "put",
// "watch").
func (c *simChecker) shown(w *simWitness, value []byte, how string) {
	d := c.run.decode(value)
	if *simTrace {
		c.run.logf("%s: shown by %s: %s", w.label, how, d.desc)
	}
	if !d.ok {
		return
	}
	rec := d.rec
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if w.first == 0 {
		w.first = c.seq
	}
	if w.viewFrom.IsZero() {
		w.viewFrom = time.Now()
	}
	if w.kind == kindFollower {
		if _, ok := w.values[string(value)]; !ok {
			w.values[string(value)] = time.Now()
		}
	}
	if n := len(w.shown); n == 0 || w.shown[n-1].epoch != c.epoch || w.shown[n-1].term < rec.Term {
		w.shown = append(w.shown, simShown{at: time.Now(), term: rec.Term, how: how, epoch: c.epoch})
	}
}

// missingRead records a read, done at at, that showed w the key missing.
func (c *simChecker) missingRead(w *simWitness, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w.missing = append(w.missing, at)
	w.missAt = append(w.missAt, time.Now())
	if w.viewFrom.IsZero() {
		w.viewFrom = at
	}
}

// goBack records that the store went back in time now.
func (c *simChecker) goBack(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	c.goBacks = append(c.goBacks, simGoBack{at: time.Now(), kind: kind, seq: c.seq})
	if kind != "restore" {
		c.current = nil // lost or deleted; a restore is recorded by its write
		c.freedBy, c.endedAt = nil, time.Time{}
	}
	if kind == "delete" {
		c.epoch++
	}
}

// epochAt is the token epoch at t: deletions before it.
func (c *simChecker) epochAt(t time.Time) int {
	n := 0
	for _, g := range c.goBacks {
		if g.kind == "delete" && !g.at.After(t) {
			n++
		}
	}
	return n
}

// termFound registers a term of w; it returns the term and true if it is new.
// ended says that its context was already done when it was found.
func (c *simChecker) termFound(w *simWitness, t Term, ended bool) (*simTerm, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := simTermKey{w, t.Token}
	if st, ok := c.byLease[k]; ok {
		return st, false
	}
	began := w.clk.readAt(t.Began) // Began is on w's clock
	st := &simTerm{who: w, token: t.Token, start: began, endKnown: !ended, dirty: true, epoch: c.epochAt(began)}
	c.byLease[k] = st
	c.terms = append(c.terms, st)
	c.run.logf("%s: term %d began at %v", w.label, t.Token, c.run.at(began))
	return st, true
}

// termEnded records the end of a term's interval.
func (c *simChecker) termEnded(st *simTerm) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A term whose deadline passed while its candidate was paused ends
	// when it resumes: it acted until the pause began.
	st.end, st.dirty = st.who.clk.acting(time.Now()), true
	c.run.logf("%s: term %d ended at %s", st.who.label, st.token, c.run.at(st.end))
}

// step runs the checks due after a driver step: the leaders seen by
// IsLeader, the intervals and tokens of new or changed terms, and what the
// followers name now.
func (c *simChecker) step(isLeader []string, followers []*simWitness) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if len(isLeader) > 1 && !c.leadersExcused(isLeader, now) {
		c.fail("mutual-exclusion", "IsLeader true for %v at once", isLeader)
	}
	for _, t := range c.terms {
		if t.dirty {
			t.dirty = false
			c.checkOverlap(t, now)
			c.checkToken(t)
		}
	}
	for _, w := range followers {
		if w.named != nil {
			c.checkNaming(w, w.named.Status, now)
		}
	}
	c.checkTakeovers(now)
}

// checkTakeovers checks invariant 8, the run window, for every takeover
// whose holder's term has ended: the gap between the end of the holder's
// term (its Context done, or the start of the pause during which its
// deadline passed) and the write that took the record over is at least
// the holder's margin, less what the two clocks' rates explain: the
// holder stops at its send + (TTL - margin) on its clock, the taker takes
// over TTL after it saw the record on its own, so the gap is at least
// TTL/rate(taker) - (TTL - margin)/rate(holder).
func (c *simChecker) checkTakeovers(now time.Time) {
	keep := c.takeovers[:0]
	for _, k := range c.takeovers {
		var u *simTerm
		for _, t := range c.terms {
			if t.who.name == k.prevLeader && t.token == k.prevTerm && !t.start.After(k.at) && (u == nil || t.start.After(u.start)) {
				u = t
			}
		}
		switch {
		case u == nil:
			if now.Sub(k.at) < 5*c.run.maxTTL {
				keep = append(keep, k) // not found yet
			}
			continue
		case u.who == k.by || !u.endKnown || c.wentBackBetween(u.start, k.at):
			continue // its own record, an end not seen, or the store went back (invariant 1's exception)
		case u.end.IsZero():
			keep = append(keep, k)
			continue
		}
		ttl, m := float64(k.prevTTL), float64(u.who.margin)
		drifted := time.Duration(ttl/k.by.clk.rate() - (ttl-m)/u.who.clk.rate())
		allowed := min(u.who.margin, drifted)
		if gap := k.at.Sub(u.end); gap < allowed-time.Microsecond {
			c.fail("run-window", "%s took term %d over at %v, %v after term %d of %s ended at %v: under its margin %v less drift (%v allowed; clock rates %.4f and %.4f)",
				k.by.label, k.term, c.run.at(k.at), gap, u.token, u.who.label, c.run.at(u.end), u.who.margin, allowed, k.by.clk.rate(), u.who.clk.rate())
		}
	}
	c.takeovers = keep
}

// end is the end of t's interval as known now (a candidate paused now
// has not acted since its pause began).
func (t *simTerm) endAt(now time.Time) time.Time {
	if t.end.IsZero() {
		return t.who.clk.acting(now)
	}
	return t.end
}

// checkOverlap compares t's interval with every other term's (invariant 1).
// An interval of zero virtual length (a term granted and ended within one
// instant) is no leadership and overlaps nothing.
func (c *simChecker) checkOverlap(t *simTerm, now time.Time) {
	if !t.endKnown || !t.start.Before(t.endAt(now)) {
		return
	}
	for _, u := range c.terms {
		if u == t || !u.endKnown || !u.start.Before(u.endAt(now)) {
			continue
		}
		if t.start.Before(u.endAt(now)) && u.start.Before(t.endAt(now)) && c.firstReport(t, u) {
			if c.lossExcused(t, u) {
				c.run.logf("term %d of %s overlaps term %d of %s: excused (never shown that term, and the store lost or rewound its data since)",
					t.token, t.who.label, u.token, u.who.label)
				continue
			}
			c.fail("mutual-exclusion", "term %d of %s [%v, %v) overlaps term %d of %s [%v, %v)",
				t.token, t.who.label, c.run.at(t.start), c.run.atOpen(t.end),
				u.token, u.who.label, c.run.at(u.start), c.run.atOpen(u.end))
		}
	}
}

// lossExcused reports whether the overlap of two terms is the documented
// limitation of a store that lost acknowledged data (invariant 1).
func (c *simChecker) lossExcused(a, b *simTerm) bool {
	early, late := a, b
	if b.start.Before(a.start) {
		early, late = b, a
	}
	// Terms restart after DeleteElection: what counts is having been shown
	// the early term's life of the key.
	if c.shownInEpoch(late, early.epoch).term >= early.token {
		return false
	}
	for _, g := range c.goBacks {
		if g.kind != "delete" && !g.at.Before(early.start) && !g.at.After(late.start) {
			return true
		}
	}
	return false
}

// leadersExcused reports whether the candidates that all have IsLeader true
// now lead terms whose every pairwise overlap lossExcused allows.
func (c *simChecker) leadersExcused(labels []string, now time.Time) bool {
	var cur []*simTerm
	for _, l := range labels {
		var found *simTerm
		for _, t := range c.terms {
			if t.who.label == l && !t.start.After(now) && (found == nil || t.start.After(found.start)) {
				found = t
			}
		}
		if found == nil {
			return false
		}
		cur = append(cur, found)
	}
	for i := range cur {
		for j := i + 1; j < len(cur); j++ {
			if !c.lossExcused(cur[i], cur[j]) {
				return false
			}
		}
	}
	return true
}

// checkToken compares t's token with every other term's of its epoch
// (invariant 2).
func (c *simChecker) checkToken(t *simTerm) {
	for _, u := range c.terms {
		if u == t || u.epoch != t.epoch {
			continue
		}
		early, late := u, t
		if t.start.Before(u.start) || (t.start.Equal(u.start) && t.token < u.token) {
			early, late = t, u
		}
		if late.token > early.token {
			continue
		}
		if c.excused(late, early) {
			c.run.logf("token %d of %s not above %d of %s: excused (shown nothing before the store went back, never term %d)",
				late.token, late.who.label, early.token, early.who.label, early.token)
			continue
		}
		if c.issuedFirst(late, early) {
			c.run.logf("token %d of %s not above %d of %s: excused (issued first, lost, and never shown to %s before its term)",
				late.token, late.who.label, early.token, early.who.label, early.who.label)
			continue
		}
		if !c.firstReport(late, early) {
			continue
		}
		m := c.shownBefore(late)
		invariant := "tokens"
		if m.term < early.token && c.wentBackBetween(early.start, late.start) {
			// Never shown early's term, and the store went back since: the
			// documented limitation (docs/semantics.md, section 7).
			c.run.logf("token %d of %s not above %d of %s: excused (never shown term %d, the store went back since)",
				late.token, late.who.label, early.token, early.who.label, early.token)
			continue
		}
		c.fail(invariant, "term %d of %s began at %v, after term %d of %s began at %v (%s was shown terms up to %d, by %s at %v; store went back since %v: %v)",
			late.token, late.who.label, c.run.at(late.start), early.token, early.who.label, c.run.at(early.start),
			late.who.label, m.term, m.how, c.run.at(m.at), c.run.at(early.start), c.wentBackBetween(early.start, late.start))
	}
}

// firstReport reports whether the pair of terms has not been reported yet.
func (c *simChecker) firstReport(a, b *simTerm) bool {
	if a.start.After(b.start) {
		a, b = b, a
	}
	k := [2]*simTerm{a, b}
	if c.pairs[k] {
		return false
	}
	c.pairs[k] = true
	return true
}

// excused reports whether the documented limitation covers late's token not
// being above early's: the store went back in time (lost its data or was
// restored) after early's record was written, late's candidate had been
// shown no record before that, and it was never shown a term as high as
// early's.
func (c *simChecker) excused(late, early *simTerm) bool {
	// Terms restart after DeleteElection: what counts is having been shown
	// the early term's life of the key.
	if c.shownInEpoch(late, early.epoch).term >= early.token {
		return false
	}
	written := c.appliedSeq(early)
	for _, g := range c.goBacks {
		if g.kind != "delete" && g.seq > written && g.at.Before(late.start) {
			return true
		}
	}
	return false
}

// issuedFirst reports whether the documented limitation covers late's
// token not being above early's when the two terms' tokens were issued in
// the other order: the store applied late's acquire before early's (late's
// candidate learned of its success only after early's term began, a reply
// delayed), the store went back in time (lost or rewound its data) between
// the two acquires, and early's candidate was never shown a term as high
// as late's before its own began. Then early's candidate numbered its term
// without having been shown a token already issued, as section 7 allows,
// and late's candidate could not know that its record was lost.
func (c *simChecker) issuedFirst(late, early *simTerm) bool {
	lateSeq, earlySeq := c.appliedSeq(late), c.appliedSeq(early)
	if lateSeq == 0 || earlySeq <= lateSeq || c.shownBefore(early).term >= late.token {
		return false
	}
	for _, g := range c.goBacks {
		if g.kind != "delete" && g.seq > lateSeq && g.seq < earlySeq {
			return true
		}
	}
	return false
}

// shownBefore is the highest term shown to t's candidate before the store
// applied the write that began t (its term number was chosen before: its
// own record, shown by a read while the write's reply was delayed, tells
// nothing), or before t began if that write is unknown.
func (c *simChecker) shownBefore(t *simTerm) simShown {
	return t.who.maxShownBefore(c.shownCut(t))
}

// shownInEpoch is shownBefore counting only what was shown in the key's
// life epoch.
func (c *simChecker) shownInEpoch(t *simTerm, epoch int) simShown {
	return t.who.maxShownInEpoch(c.shownCut(t), epoch)
}

// shownCut is the instant before which what t's candidate was shown
// counts: the term's start, or the write that began it.
func (c *simChecker) shownCut(t *simTerm) time.Time {
	cut := t.start
	name, _, _ := strings.Cut(t.who.label, "#")
	as := c.applies[simHolder{name, t.token}]
	if n := sort.Search(len(as), func(i int) bool { return as[i].at.After(t.start) }); n > 0 && as[n-1].engine {
		cut = as[n-1].at
	}
	return cut
}

// appliedSeq is the sequence number of the write that began t: the last
// write naming t's holder in its term applied no later than t began.
func (c *simChecker) appliedSeq(t *simTerm) uint64 {
	name, _, _ := strings.Cut(t.who.label, "#")
	as := c.applies[simHolder{name, t.token}]
	n := sort.Search(len(as), func(i int) bool { return as[i].at.After(t.start) })
	if n == 0 {
		return 0
	}
	return as[n-1].seq
}

// observed records a follower's observation, closing the previous one.
func (c *simChecker) observed(w *simWitness, o Status) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o.At = w.clk.readAt(o.At) // At is on w's clock
	c.run.logf("%s: names %q (term %d)", w.label, o.Leader, o.Token)
	if w.named != nil {
		c.checkNaming(w, w.named.Status, o.At)
	}
	w.named = &simNaming{o}
	if o.Leader == "" {
		return
	}
	if h := w.highest; h != nil && h.Token > o.Token && !c.wentBackBetween(c.lastApplied(h.Status, h.At), o.At) {
		c.fail("followers", "%s names %s in term %d after it named %s in the later term %d",
			w.label, o.Leader, o.Token, h.Leader, h.Token)
	}
	if h := w.highest; h == nil || h.Token < o.Token || c.wentBackBetween(h.At, o.At) {
		w.highest = &simNaming{o}
	}
}

// simCut is a partition of one participant (who) or an outage of the
// server (who nil), during which watch events are held and delivered at its
// end, as TCP delivers what it buffered.
type simCut struct {
	who      *simWitness
	from, to time.Time // to is zero while it lasts
}

// cutStart records that w (nil: everyone) is cut off from now.
func (c *simChecker) cutStart(w *simWitness) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cuts = append(c.cuts, simCut{who: w, from: time.Now()})
}

// cutEnd records that w's (nil: the server's) cut ended now.
func (c *simChecker) cutEnd(w *simWitness) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.cuts {
		if c.cuts[i].who == w && c.cuts[i].to.IsZero() {
			c.cuts[i].to = time.Now()
		}
	}
}

// heldBy is how late a cut of w may have delivered what the store applied
// at applied: from then (or the cut's start) to the cut's end, for cuts
// that ended by until.
func (c *simChecker) heldBy(w *simWitness, applied, until time.Time) time.Duration {
	var held time.Duration
	for _, k := range c.cuts {
		if (k.who != nil && k.who != w) || k.to.IsZero() || k.to.After(until) || !k.to.After(applied) {
			continue
		}
		held = max(held, k.to.Sub(applied))
	}
	return held
}

// lastApplied is the last time, no later than at, the store applied a
// write naming o's holder in o's term (at itself if none).
func (c *simChecker) lastApplied(o Status, at time.Time) time.Time {
	as := c.applies[simHolder{o.Leader, o.Token}]
	n := sort.Search(len(as), func(i int) bool { return as[i].at.After(at) })
	if n == 0 {
		return at
	}
	return as[n-1].at
}

// stoppedNaming closes a stopped follower's last observation.
func (c *simChecker) stoppedNaming(w *simWitness) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.named != nil {
		c.checkNaming(w, w.named.Status, time.Now())
		w.named = nil
	}
}

// wentBackBetween reports whether the store went back in time in (a, b].
func (c *simChecker) wentBackBetween(a, b time.Time) bool {
	for _, g := range c.goBacks {
		if !g.at.Before(a) && !g.at.After(b) {
			return true
		}
	}
	return false
}

// checkNaming checks that w may still name o's holder just before until
// (invariant 3).
func (c *simChecker) checkNaming(w *simWitness, o Status, until time.Time) {
	until = w.clk.acting(until) // a paused follower shows nothing
	if o.Leader == "" || !until.After(o.At) {
		return
	}
	as := c.applies[simHolder{o.Leader, o.Token}] // in time order
	n := sort.Search(len(as), func(i int) bool { return as[i].at.After(until) })
	if n == 0 {
		c.fail("followers", "%s names %s in term %d, which no write named", w.label, o.Leader, o.Token)
		w.named.Leader = "" // reported once
		return
	}
	last := as[n-1]
	// Any write naming the holder in the term vouches for it: the latest
	// of the holder's own, and every restore or rewrite since, each with
	// how long a cut or a pause of the follower held it back.
	var best, lease time.Time
	var held time.Duration
	for i := n - 1; i >= 0; i-- {
		a := as[i]
		l := later(c.boundFor(w, as[:i+1]), w.started.Add(a.ttl))
		h := c.heldBy(w, later(a.at, w.started), until)
		if b := l.Add(h); b.After(best) {
			best, lease, held = b, l, h
		}
		if a.engine {
			break
		}
	}
	if bound := best.Add(c.slack); until.After(bound) {
		c.fail("followers", "%s names %s in term %d at %v, past %v (the holder's lease on the last write naming it, applied at %v, ended at %v; + slack %v + held by a cut or pause %v)",
			w.label, o.Leader, o.Token, c.run.at(until), c.run.at(bound), c.run.at(last.at), c.run.at(lease), c.slack, held)
		w.named.Leader = ""
		return
	}
	for i, at := range w.missing {
		if w.missAt[i].Before(until) && last.at.Before(at) {
			c.fail("followers", "%s names %s in term %d at %v after a read at %v returned to it at %v showed the key missing",
				w.label, o.Leader, o.Token, c.run.at(until), c.run.at(at), c.run.at(w.missAt[i]))
			w.named.Leader = ""
			return
		}
	}
}

// boundFor is the bound of the last of as for the follower w: an identical
// rewrite of a value w had been shown extends nothing, and one of a value
// it had not been shown is news, as a write of that moment is.
func (c *simChecker) boundFor(w *simWitness, as []simApply) time.Time {
	last := as[len(as)-1]
	if !last.rewrite {
		return last.bound
	}
	seen, ok := w.values[last.value]
	if !ok || !seen.Before(last.at) {
		return last.fresh
	}
	for i := len(as) - 2; i >= 0; i-- { // the write of that value that showed it to w
		if as[i].value == last.value && !as[i].at.After(seen) {
			return c.boundFor(w, as[:i+1])
		}
	}
	return last.fresh
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// liveness checks invariant 4 at a driver step of a calm phase.
func (c *simChecker) liveness(calmFor, bound time.Duration, leader bool, why func() string) {
	if leader || calmFor <= bound {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail("liveness", "no leader %v into a calm phase (bound %v); %s", calmFor, bound, why())
}

// stopTook checks invariant 6 for one Stop or cancel.
func (c *simChecker) stopTook(w *simWitness, how string, took, bound time.Duration) {
	if took <= bound {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail("stop", "%s of %s took %v, more than %v", how, w.label, took, bound)
}

// restoreCandidates lists the applied values older than cur (nil: any),
// oldest first: same term with a lower sequence, or an older term.
func (c *simChecker) restoreCandidates(cur []byte) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.run.decode(cur)
	var out [][]byte
	for _, v := range c.history {
		d := c.run.decode(v)
		if d.ok && (cur == nil || !now.ok || now.rec.NewerThan(&d.rec)) {
			out = append(out, v)
		}
	}
	return out
}

// summary describes the violations for the failure message.
func (c *simChecker) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	kinds := map[string]int{}
	for _, v := range c.violations {
		kinds[v.invariant]++
		if kinds[v.invariant] <= 3 {
			fmt.Fprintf(&b, "  at %8.3fs %s: %s\n", v.at.Seconds(), v.invariant, v.detail)
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	var counts []string
	for _, k := range names {
		counts = append(counts, fmt.Sprintf("%s x%d", k, kinds[k]))
	}
	return fmt.Sprintf("violations: %s\n%s", strings.Join(counts, ", "), b.String())
}

// failed reports whether any invariant was broken.
func (c *simChecker) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.violations) > 0
}

// firstInvariants lists the distinct invariants broken, in order.
func (c *simChecker) firstInvariants() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, v := range c.violations {
		if !slices.Contains(out, v.invariant) {
			out = append(out, v.invariant)
		}
	}
	return out
}

// lastIndexNow is the index of the latest write applied.
func (c *simChecker) lastIndexNow() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastIndex
}
