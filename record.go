package leadership

import (
	"bytes"
	"strings"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/electionrecord"
)

// record is the one value an election keeps at its key; its format is in
// internal/electionrecord, which the command's status reads too.
type record = electionrecord.Record

// decodeRecord parses a stored value; see electionrecord.Decode.
func decodeRecord(b []byte) (record, bool) { return electionrecord.Decode(b) }

// snapKind says what a snapshot of the key found.
type snapKind uint8

const (
	snapMissing snapKind = iota // the key does not exist
	snapRecord                  // a record written by this library
	snapForeign                 // a value this library did not write
)

// snapshot is what one read or watch event showed of the election key.
type snapshot struct {
	kind snapKind
	pair *store.KVPair // nil when missing
	rec  record        // when kind == snapForeign, only Term and TTLms, from a later format version
}

// snapshotOf classifies a pair from a read or a watch. An empty value counts
// as a missing key: that is how several backends' watches report a delete.
func snapshotOf(pair *store.KVPair) snapshot {
	if pair == nil || len(pair.Value) == 0 {
		return snapshot{kind: snapMissing}
	}
	rec, ok := decodeRecord(pair.Value)
	if ok {
		return snapshot{kind: snapRecord, pair: pair, rec: rec}
	}
	return snapshot{kind: snapForeign, pair: pair, rec: rec}
}

// supersedes reports whether s is a different, later state than old. Records
// are ordered by their counters, so a late or repeated watch event never
// moves an observer backwards. Anything involving a missing key or a foreign
// value is compared by content.
func (s snapshot) supersedes(old snapshot) bool {
	if s.kind == snapRecord && old.kind == snapRecord {
		return s.rec.NewerThan(&old.rec)
	}
	if s.kind != old.kind {
		return true
	}
	if s.kind == snapMissing {
		return false
	}
	return s.pair.LastIndex != old.pair.LastIndex || !bytes.Equal(s.pair.Value, old.pair.Value)
}

// leader is the name the snapshot shows as holding the election, or "".
func (s snapshot) leader() string {
	if s.kind != snapRecord || s.rec.Ended {
		return ""
	}
	return s.rec.Leader
}

// normalizeKey trims surrounding slashes, which every backend treats
// differently, so that "a/b", "/a/b" and "a/b/" name one election.
func normalizeKey(key string) string { return strings.Trim(key, "/") }
