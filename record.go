package leadership

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// recordVersion is the format version written in every record.
const recordVersion = 1

// record is the one value an election keeps at its key. It is never written
// with a store TTL and only ever changed by compare-and-swap, so the term
// and generation counters it carries survive releases, crashes and ends.
type record struct {
	Version int    `json:"v"`
	Leader  string `json:"leader"`         // holder's name; "" when free
	ID      string `json:"id,omitempty"`   // holder's instance id; "" when free
	Term    uint64 `json:"term"`           // fencing token of the current or last term
	Seq     uint64 `json:"seq"`            // writes since the term began
	TTLms   int64  `json:"ttl_ms"`         // lease the holder promised to honour
	Gen     uint64 `json:"gen"`            // election generation; EndElection bumps it
	Ended   bool   `json:"ended,omitzero"` // the election of generation Gen has ended
	Since   string `json:"since,omitzero"` // informational: wall time the term began
	// Token is unique to each write. Some stores compare a top-level
	// "LastIndex" member of the JSON value in their compare-and-swap
	// (kvtools/redis with its raw codec); a fresh token in every write makes
	// that comparison exact, and it lets a writer recognise its own write.
	Token string `json:"LastIndex"`
}

// free reports whether no one holds the record.
func (r *record) free() bool { return r.ID == "" }

// ttl is the lease the holder promised.
func (r *record) ttl() time.Duration { return time.Duration(r.TTLms) * time.Millisecond }

// newerThan orders two records written by this library: every write bumps
// the generation, the term or the sequence.
func (r *record) newerThan(o *record) bool {
	if r.Gen != o.Gen {
		return r.Gen > o.Gen
	}
	if r.Term != o.Term {
		return r.Term > o.Term
	}
	return r.Seq > o.Seq
}

// stamp gives the record a fresh write token and returns its encoding.
func (r *record) stamp() []byte {
	var b [8]byte
	_, _ = rand.Read(b[:])
	r.Version = recordVersion
	r.Token = fmt.Sprintf("%d.%d.%d.%s", r.Gen, r.Term, r.Seq, hex.EncodeToString(b[:]))
	out, _ := json.Marshal(r) // a struct of strings, numbers and bools cannot fail
	return out
}

// decodeRecord parses a stored value; ok is false for a value this library
// did not write in this format version. A record of a later version still
// yields its term and TTL (ok false), which a candidate honours.
func decodeRecord(b []byte) (rec record, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return record{}, false
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Version < 1 {
		return record{}, false
	}
	if rec.Version != recordVersion {
		return record{Term: rec.Term, TTLms: rec.TTLms}, false
	}
	return rec, true
}

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
		return s.rec.newerThan(&old.rec)
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
