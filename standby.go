package leadership

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/electionrecord"
)

// Standby: a handoff in one write. A waiting candidate run with WithStandby
// writes a claim beside the election key (standbyKey) once per renew
// interval; a leader with WithStandby that steps down (Stop, Resign, a
// relinquish) reads the claim and writes the next term for the claimant
// instead of a free record. The claimant starts that term when it sees the
// record, without a write of its own, and dates its lease from the send of
// the claim the record names: the leader read that claim after it landed
// and wrote the record after that, so every other observer first saw the
// record later and counts the claimant's TTL from then.

// WithStandby makes the candidate take part in one-write handoffs. While
// another candidate leads, it writes a standby claim beside the election
// key (at key + ".standby") once per renew interval: one more write per
// interval per waiting candidate. When it leads and steps down by Stop,
// Resign or a relinquish, it writes the next term for the candidate whose
// claim it knows there (the last to write one; it watches the claim key
// from its start), which leads from the moment it sees that record: a
// handoff costs the release and one watch push, not a second write.
// HandOff, which names its successor, is not changed. A claim not written
// again for two of its candidate's intervals is not used, nor one whose
// age the watch cannot tell (it was there before the watch opened, and
// not written again since), nor one whose candidate has led since it
// claimed (a candidate withdraws its claim when its term begins): the
// release frees the record instead. A claim
// left by a candidate that crashed within that time, or one that a late
// watch event still shows after its candidate withdrew it, may be chosen:
// that successor never takes the term, and the others take over one TTL
// later, as after a leader's crash. Only a term the leader itself led is
// handed on, never a record of its that it merely read, and not once the
// store went back in time. A candidate withdraws its claim when it stops,
// claims nothing during its resign holdoff, and takes no term handed to it
// then, nor one numbered no higher than a term it saw elsewhere. Every
// candidate of an election should be given the option; the others ignore
// claims and are ignored.
// Candidates only: a follower given it refuses to start (ErrInvalidOption).
func WithStandby() Option {
	return candidateOnly("WithStandby", func(c *config) { c.standby = true })
}

// standbyKey is the key of the election's standby claims.
func standbyKey(key string) string { return key + ".standby" }

// claim is one standby claim; its format is in internal/electionrecord.
type claim = electionrecord.Claim

// sentClaims is how many of its latest claims a candidate remembers: a
// record written for an older claim is waited out like anyone else's.
const sentClaims = 4

// standby is a candidate's side of standby claims.
type standby struct {
	key  string
	pair *store.KVPair // the claim key as this candidate last wrote or read it; nil: missing or unknown
	// unknownPair: this candidate's last claim landed, but the store did
	// not answer with it as stored (no index): a withdrawal reads it first.
	unknownPair bool
	due         time.Duration // when the next claim is due
	// consumed: a term of this candidate's began since its last claim,
	// which it withdraws.
	consumed   bool
	withdrawAt time.Duration // when, if consumed
	// holders are the latest candidates seen holding the record, and
	// when: a claim of one of them learned before that is consumed.
	holders [sightings]sighting
	sent    [sentClaims]sentClaim
	next    int // where the next claim is remembered in sent
	// watcher keeps the latest claim once this candidate has led, so that
	// its releases need no read first; nil before.
	watcher *claimWatcher
}

// sentClaim is a claim's nonce and the moment its write was first sent.
type sentClaim struct {
	nonce string
	at    time.Duration
}

// remember notes that the claim nonce was sent at at.
func (sb *standby) remember(nonce string, at time.Duration) {
	sb.sent[sb.next] = sentClaim{nonce: nonce, at: at}
	sb.next = (sb.next + 1) % sentClaims
}

// forget drops the claims remembered: a term of this candidate's own began,
// and a record written for a claim of before it is waited out.
func (sb *standby) forget() {
	sb.sent = [sentClaims]sentClaim{}
}

// sentAt is when the claim nonce was first sent, if it is one of the
// claims remembered.
func (sb *standby) sentAt(nonce string) (time.Duration, bool) {
	for _, s := range sb.sent {
		if s.nonce != "" && s.nonce == nonce {
			return s.at, true
		}
	}
	return 0, false
}

// standsBy reports whether a claim is due now: another candidate leads,
// and nothing from the store's past may still lead.
func (e *campaign) standsBy(now time.Duration) bool {
	return e.standbyAt() <= now
}

// standbyAt is when the next claim is due: never unless another candidate
// leads.
func (e *campaign) standbyAt() time.Duration {
	s := e.cur
	if e.standby == nil || e.hold != nil || s.kind != snapRecord || s.rec.Free() || s.rec.Ended || s.rec.ID == e.id || e.rewound {
		return never
	}
	// After resigning, the election is left to the others until the
	// holdoff ends: no claim, so no term handed back before then.
	return max(e.standby.due, e.acquireAtHistory(), e.holdoffUntil)
}

// claimStandby writes this candidate's claim, compare-and-swapped over the
// claim last seen; when another claim came in between, it reads the key
// and tries once more. Failures are only counted: the next claim is due
// one renew interval later all the same.
func (e *campaign) claimStandby() {
	sb := e.standby
	sb.due = e.clock() + e.cfg.renewInterval
	c := claim{Name: e.node, ID: e.id, TTLms: e.ttl.Milliseconds(), Gen: e.gen, EveryMs: e.cfg.renewInterval.Milliseconds(),
		Term: e.cur.rec.Term}
	value := c.Stamp()
	e.standby.remember(c.Nonce, e.clock())
	for range 2 {
		// Half a request timeout: a claim is worth less than the engine's
		// next step, which waits for it.
		ctx, cancel := context.WithTimeout(e.ctx, e.cfg.requestTimeout/2)
		sent := e.clock()
		ok, pair, err := casKey(ctx, e.client, sb.key, value, sb.pair)
		conflict := err == nil && !ok || err != nil && isConflict(err)
		e.measured("claim", sent, nilIf(conflict, err), conflict)
		if err == nil && ok {
			cancel()
			sb.pair, sb.unknownPair = nil, true
			if pair != nil && pair.LastIndex != 0 && bytes.Equal(pair.Value, value) {
				sb.pair, sb.unknownPair = pair, false
			}
			return
		}
		if !conflict {
			// The claim may have landed all the same (a reply lost, a
			// call cut short by Stop): a withdrawal reads the key first.
			cancel()
			sb.pair, sb.unknownPair = nil, true
			return
		}
		pair, err = getKey(ctx, e.client, sb.key)
		cancel()
		switch {
		case errors.Is(err, store.ErrKeyNotFound):
			sb.pair = nil
		case err != nil:
			return
		default:
			sb.pair = pair
		}
	}
}

// nilIf is nil when cond holds, else err.
func nilIf(cond bool, err error) error {
	if cond {
		return nil
	}
	return err
}

// standbyClaim is the election's standby claim for a release of the held
// term: the claim of another candidate of the same generation, written
// lately, or nil. It is the claim the claim watcher knows, if that one will
// do, or else a read: a claim written since the watch last told, which it
// has not delivered yet, is not missed. A claim whose age is unknown (the
// key not read yet, or the claim first shown by a read, or the watch
// silent for too long to date a claim only a read shows) is not used, nor
// one whose candidate has held the record since the claim was learned (its
// own term consumed it): its candidate may be long gone, or no longer
// waiting for that claim.
func (e *campaign) standbyClaim(ctx context.Context) *claim {
	if e.standby == nil || e.standby.watcher == nil || !e.handsOver(e.hold) {
		return nil
	}
	known, ok := e.standby.watcher.latest()
	if !ok {
		return nil
	}
	if e.claimUsable(known.c) && e.claimFresh(known.c, known.at) {
		return known.c
	}
	// A quarter of a request timeout, so that the release that follows
	// keeps the rest of Stop's.
	rctx, cancel := context.WithTimeout(ctx, e.cfg.requestTimeout/4)
	defer cancel()
	sent := e.clock()
	pair, err := getKey(rctx, e.client, e.standby.key)
	e.measured("get", sent, nilIf(errors.Is(err, store.ErrKeyNotFound), err), false)
	if err != nil {
		return nil
	}
	// A claim other than the one the watch last told of was written after
	// the watch last showed the key (at told, or later).
	if c, ok := electionrecord.DecodeClaim(pair.Value); ok && e.claimUsable(&c) && !sameClaim(known.c, &c) &&
		e.claimFresh(&c, known.told) {
		return &c
	}
	return nil
}

// claimFresh reports whether a claim written no earlier than at may still
// be waited on: written again within two of its candidate's intervals
// (plus a request timeout: its write's own time), and not consumed by a
// term of its candidate's above the term the claim was written under (by
// terms, not times: the order of two watches, the record's and the claim
// key's, tells nothing).
func (e *campaign) claimFresh(c *claim, at time.Duration) bool {
	return e.clock()-at <= 2*c.Every()+e.cfg.requestTimeout && !e.standby.consumedBy(c, at)
}

// sightings is how many of the latest holders a candidate remembers: a
// claim consumed by an earlier one is, within its freshness window, rare
// (as many handoffs in two claim intervals), and costs one TTL at most.
const sightings = 16

// sighting is a candidate seen holding the record: when last, and the
// highest term it held.
type sighting struct {
	id   string
	at   time.Duration
	term uint64
}

// sawHolder notes that id was seen holding term at at. The sightings kept
// are the latest few holders: a claim consumed longer ago than that is
// withdrawn by its candidate (stepHolding) or not written again lately.
func (sb *standby) sawHolder(id string, term uint64, at time.Duration) {
	oldest := 0
	for i, h := range sb.holders {
		if h.id == id {
			sb.holders[i].at, sb.holders[i].term = at, max(h.term, term)
			return
		}
		if h.at < sb.holders[oldest].at {
			oldest = i
		}
	}
	sb.holders[oldest] = sighting{id: id, at: at, term: term}
}

// consumedBy reports whether c's candidate was seen holding a term above
// the one c was written under; for a claim that names no term (written by
// an older version), whether it was seen holding the record at or after
// at.
func (sb *standby) consumedBy(c *claim, at time.Duration) bool {
	for _, h := range sb.holders {
		if h.id == c.ID && (h.term > c.Term || c.Term == 0 && h.at >= at) {
			return true
		}
	}
	return false
}

// handsOver reports whether the release of h may write the next term for a
// standby claimant: h is a term this candidate led (its own confirmed
// write, its lease of that term), and the store has not gone back in time
// since. A record naming this candidate that it only read (a write of an
// acquire whose outcome it never learned, a record restored from a backup)
// proves nothing about who else may lead: its release frees the record,
// with its own counters, for everyone to judge.
func (e *campaign) handsOver(h *holding) bool {
	return h != nil && h.lease != nil && h.lease.term.Token == h.rec.Term && !e.rewound && e.clock() >= e.acquireAtHistory()
}

// claimUsable reports whether the held term may be handed to c: another
// candidate's claim, of the same generation, with a TTL in range.
func (e *campaign) claimUsable(c *claim) bool {
	return c != nil && c.ID != e.id && c.Gen == e.hold.rec.Gen && c.TTL() >= MinTTL && c.TTL() <= MaxTTL
}

// watchClaims starts the claim watcher when the campaign starts: by the
// time the candidate leads, the watch has told when the claims it shows
// were written.
func (e *campaign) watchClaims() {
	if sb := e.standby; sb != nil && sb.watcher == nil {
		sb.watcher = startClaimWatcher(e.client, sb.key, e.cfg, e.clock)
	}
}

// stopWatchingClaims ends the claim watcher, if any, and returns the
// wait for its end.
func (e *campaign) stopWatchingClaims() (wait func()) {
	sb := e.standby
	if sb == nil || sb.watcher == nil {
		return func() {}
	}
	w := sb.watcher
	sb.watcher = nil
	w.stop()
	return w.wait
}

// termFor is the record of the next term, written for the claimant c by
// the leader whose record is cur.
func (e *campaign) termFor(c *claim, cur record) record {
	return record{Leader: c.Name, ID: c.ID, Term: max(cur.Term, e.maxTerm) + 1, TTLms: c.TTLms, Gen: cur.Gen,
		Since: e.clk.Now().UTC().Format(time.RFC3339Nano), Claim: c.Nonce}
}

// takeHandedTerm starts the term that a leader wrote for one of this
// candidate's recent claims, if cur is that record. The lease is dated
// from the claim's send. A record handed during the resign holdoff, or
// numbered no higher than a term this candidate saw elsewhere (a leader
// that missed later terms, the store having lost them), is waited out like
// anyone else's.
func (e *campaign) takeHandedTerm() {
	s, sb := e.cur, e.standby
	if sb == nil || e.finishing || e.releasing || e.hold != nil || s.kind != snapRecord || s.rec.ID != e.id || s.rec.Claim == "" ||
		s.rec.Ended || s.rec.Gen != e.gen || e.rewound || e.confirmedStill(s) || e.clock() < max(e.acquireAtHistory(), e.holdoffUntil) ||
		s.rec.Term <= e.highestTermBesides(s.rec) {
		return
	}
	if sent, ok := sb.sentAt(s.rec.Claim); ok {
		e.won(s.rec, s.pair, sent)
		if e.hold != nil {
			e.hold.renewDue = 0 // a lease of its own write, and a record without the claim
		}
	}
}

// deleteStandbyClaim deletes whatever standby claim the election at key
// has, for DeleteElection; a claim written meanwhile stays.
func deleteStandbyClaim(ctx context.Context, client Backend, key string) {
	if pair, err := getKey(ctx, client, standbyKey(key)); err == nil {
		_, _ = casDelete(ctx, client, standbyKey(key), pair)
	}
}

// withdrawClaim deletes this candidate's claim, if it was the last one
// written, so that a leader does not hand its term to a stopped candidate.
func (e *campaign) withdrawClaim(ctx context.Context) {
	sb := e.standby
	if sb == nil || sb.pair == nil && !sb.unknownPair {
		return
	}
	rctx, cancel := e.reqCtx(ctx)
	defer cancel()
	pair := sb.pair
	if pair == nil {
		p, err := getKey(rctx, e.client, sb.key)
		if err != nil {
			return
		}
		pair = p
	}
	if c, ok := electionrecord.DecodeClaim(pair.Value); !ok || c.ID != e.id {
		return
	}
	if _, err := casDelete(rctx, e.client, sb.key, pair); err == nil {
		// Deleted, or the key changed since: the claim is gone either way.
		sb.pair, sb.unknownPair = nil, false
	}
}
