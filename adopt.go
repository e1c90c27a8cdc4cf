package leadership

import (
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// Which states of the key an observer adopts: only later ones, so that a
// late or repeated watch event never moves it backwards; and what it does
// when the store itself went back in time (lost or restored its data),
// whose forgotten holder may still be acting until its lease ends.

// adopt makes s the current state if it is later than what is known, and
// reports whether it did. A watch saying the key is gone is only a hint: a
// read must confirm it.
func (o *observer) adopt(s snapshot, fromWatch bool) bool {
	o.noteTerm(s.rec) // from every record, adopted or not
	// When this observation saw the store hold the state it shows: the
	// send time of a read, the arrival of an event.
	obsAt := o.readSent
	if fromWatch {
		obsAt = o.clock()
		if o.eventAt >= 0 {
			obsAt = min(obsAt, o.eventAt)
		}
	}
	current := s.kind == o.cur.kind && (s.kind == snapMissing || s.kind == snapRecord && s.rec.Token == o.cur.rec.Token)
	var gone time.Duration // the lease of a hinted holder this read shows gone
	if !fromWatch && o.hinted {
		if s.kind != snapRecord || !o.hintStands(s.rec) {
			// The record the watch showed is gone: the store went back
			// (again), and its holder may have renewed it, unseen (the
			// reads failed, the watch was cut), until this read was sent.
			o.lostTill = max(o.lostTill, o.readSent+o.hintTTL)
			gone = o.hintTTL
		}
		o.hinted, o.hintTTL = false, 0
	}
	adopted := o.adoptAt(s, fromWatch, obsAt)
	if fromWatch && adopted {
		o.doubted = false // the watch showed a change first: it works
		if !o.gap {
			o.liveAt = o.clock() // and the slow poll waits (nextPoll)
		}
	}
	if gone > 0 {
		// Whoever led when this read showed the store gone back, that
		// holder may lead too (acquireAt): goBack's lost holder is not
		// the only one.
		o.lost = lostHolder{ttl: max(o.lost.ttl, gone)}
	}
	if !fromWatch || adopted || current {
		o.lastObs = max(o.lastObs, obsAt)
	}
	if !fromWatch && o.readSent >= o.gapAt {
		o.gap = false // a read sent since the failure answered: events are live again
	}
	return adopted
}

// hintStands reports whether a read still shows the holder a watch event
// hinted at: its record itself, or a later write of the same holder.
// Counters alone tell nothing once the store went back: a restored record
// of another holder's past (a release, say) may be newer by its counters
// than the hinted record that it erased.
func (o *observer) hintStands(r record) bool {
	return r.Token == o.hint.Token || r.ID == o.hint.ID && r.NewerThan(&o.hint)
}

func (o *observer) adoptAt(s snapshot, fromWatch bool, obsAt time.Duration) bool {
	if fromWatch && o.stale(s) {
		if s.kind == snapRecord && !s.rec.Free() {
			// A holder written after the store went back may act until its
			// lease ends, even if the store loses that record again before
			// a read shows it. Nothing tells such a record from a late
			// event of the past: not its counters (a candidate that never
			// saw the newest record numbers its term from an older one),
			// nor whether a read has shown the store go back yet (it may
			// have gone back unseen, the reads failing). So every holder
			// an event shows and the observer does not adopt is waited out.
			o.lostTill = max(o.lostTill, o.clock()+s.rec.TTL())
			// It may renew until a read shows the record gone (adopt), and
			// a candidate that led when the store went back no longer knows
			// that no one else leads (acquireAt).
			if !o.hinted || s.rec.NewerThan(&o.hint) {
				o.hint = s.rec
			}
			o.hinted, o.hintTTL = true, max(o.hintTTL, s.rec.TTL())
			if s.rec.ID != o.lost.id {
				o.lost = lostHolder{ttl: max(o.lost.ttl, s.rec.TTL())}
			}
		}
		o.needRead = true
		return false
	}
	if fromWatch && s.kind == snapRecord && o.seen && s.rec.Token == o.high.Token {
		return false
	}
	if !fromWatch && o.rewritten(s) {
		// The same write stored again (a sync tool, a re-created node):
		// not a new state, but the next compare-and-swap needs its index,
		// and a waiter counts the holder's TTL again from now, since this
		// may be a restore of a record seen long ago.
		o.cur.pair, o.seenAt = s.pair, o.clock()
		return false
	}
	if !fromWatch && o.wentBack(s) {
		o.goBack(s)
		return true
	}
	if !s.supersedes(o.cur) {
		return false
	}
	next := o.follows(s)
	// After the store went back to a missing key, a record no newer than
	// the newest one seen is still the past (a backup restored after a
	// loss), not a new write: the store stays gone back until a record
	// newer than this one shows who leads, and watch events stay hints.
	past := o.rewound && o.cur.kind != snapRecord && s.kind == snapRecord && o.seen && !s.rec.NewerThan(&o.high)
	o.cur, o.seenAt, o.rewound = s, o.clock(), past
	// A new state seen by a live event is about as old as the event. One
	// seen by a read, or by an event while the store or the watch failed
	// and no read has answered since (a watch that resumes sends what
	// changed meanwhile, perhaps long ago; a watch just opened sends the
	// state it read then), was applied after the store was last seen
	// without it, and no earlier; a read will tell more.
	o.freshAt = obsAt
	if !fromWatch || o.gap || !next {
		o.freshAt = min(o.lastObs, obsAt)
		o.needRead = o.needRead || fromWatch
	}
	if s.kind == snapRecord {
		o.noteRecord(s.rec)
	}
	o.warnForeign()
	return true
}

// follows reports whether s is the write that came right after the current
// state: the next renewal of the same term, or the first write of a term.
// An event that skips writes comes from a watch that missed them (it
// resumed after an outage, say) and may show a state applied long ago.
// A record whose adapter numbers its renewals with jumps (SeqJumps, set
// only on events that follow the watch's previous one) is the next renewal
// whatever its Seq.
func (o *observer) follows(s snapshot) bool {
	if s.kind != snapRecord {
		return true
	}
	if o.cur.kind == snapRecord && s.rec.Term == o.cur.rec.Term && s.rec.Gen == o.cur.rec.Gen {
		return s.rec.Seq == o.cur.rec.Seq+1 || s.rec.SeqJumps && s.rec.Seq > o.cur.rec.Seq
	}
	return s.rec.Seq == 0
}

// stale reports whether a watch event may show a state older than one
// already seen, so that only a read can tell: a delete (some backends
// report one for an expired or wiped key), or a record no newer than the
// newest one seen (a late or repeated event, perhaps from before the store
// lost its data). The read that follows decides.
func (o *observer) stale(s snapshot) bool {
	if o.rewound {
		// A read showed the store gone back in time: an event may still
		// carry a state from before, which must not undo what the read saw.
		return s.kind != snapForeign
	}
	switch s.kind {
	case snapMissing:
		return o.seen
	case snapRecord:
		// The newest record itself, repeated, tells nothing new.
		return o.seen && !s.rec.NewerThan(&o.high) && s.rec.Token != o.high.Token
	}
	return false
}

// rewritten reports whether a read shows the current record stored again
// with identical content but another index.
func (o *observer) rewritten(s snapshot) bool {
	return s.kind == snapRecord && o.cur.kind == snapRecord && s.rec.Token == o.cur.rec.Token &&
		s.pair.LastIndex != o.cur.pair.LastIndex
}

// noteRecord takes note of a record seen as the current state: the newest
// record, and the generation for an observer that joined while the key was
// missing or saw the store go back to it.
func (o *observer) noteRecord(r record) {
	if !o.seen || r.NewerThan(&o.high) {
		o.high = r
	}
	o.seen = true
	if !o.genKnown && !r.Ended {
		o.gen, o.genKnown = r.Gen, true
	}
}

// wrote makes a record this process wrote, as stored, the current state.
func (o *observer) wrote(rec record, pair *store.KVPair) {
	o.cur, o.seenAt, o.rewound = snapshot{kind: snapRecord, pair: pair, rec: rec}, o.clock(), false
	o.freshAt, o.lastObs, o.liveAt = o.seenAt, o.seenAt, o.seenAt
	o.noteTerm(rec)
	o.noteRecord(rec)
}

// noteTerm raises the highest term seen to r's, remembering which record
// set it and the highest before it.
func (o *observer) noteTerm(r record) {
	if r.Term > o.maxTerm {
		o.belowMax, o.maxTerm, o.maxToken = o.maxTerm, r.Term, r.Token
	}
}

// highestTermBesides is the highest term seen in any record but r.
func (o *observer) highestTermBesides(r record) uint64 {
	if r.Token == o.maxToken {
		return o.belowMax
	}
	return o.maxTerm
}

// wentBack reports whether a read shows the store older than what was
// already seen: the record gone, or replaced by one with counters no higher
// (every write raises them, and a read never goes back in time unless the
// store lost or restored its data). DeleteElection deletes the key too, but
// only after the ended record had time to tell every participant.
func (o *observer) wentBack(s snapshot) bool {
	if o.cur.kind != snapRecord {
		return false
	}
	switch s.kind {
	case snapMissing:
		return true
	case snapRecord:
		return !s.rec.NewerThan(&o.cur.rec) && s.rec.Token != o.cur.rec.Token
	}
	return false
}

// lostHolder is the holder of the newest record seen before the store went
// back in time.
type lostHolder struct {
	id  string        // its instance id; "" when the record was free
	ttl time.Duration // the lease it promised
}

// goBack adopts a state older than the one known. Whoever held the newer
// record may still act until its lease ends, so a candidate waits for that
// (acquireAt); followers name no one until a new write shows who leads.
func (o *observer) goBack(s snapshot) {
	if !o.rewound {
		o.lost = lostHolder{id: o.cur.rec.ID, ttl: o.cur.rec.TTL()}
	} else if o.cur.rec.ID != o.lost.id {
		o.lost = lostHolder{ttl: max(o.lost.ttl, o.cur.rec.TTL())}
	}
	o.cfg.logger.Warn("leadership: the store went back in time (lost or restored its data)", "key", o.key,
		"term", o.cur.rec.Term, "now", s.rec.Term)
	o.cur, o.seenAt, o.rewound = s, o.clock(), true
	o.freshAt = o.seenAt
	o.lostAt, o.backs = o.seenAt, o.backs+1
	o.lostTill = max(o.lostTill, o.seenAt+o.lost.ttl)
	o.noteTerm(s.rec)
	// The generation counts from what the store shows now, so that records
	// written after the loss by those who never saw the older ones do not
	// look like a later election.
	o.genKnown = false
	if s.kind == snapRecord && !s.rec.Ended {
		o.gen, o.genKnown = s.rec.Gen, true
	}
}
