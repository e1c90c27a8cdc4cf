// Package electionrecord is the format of the one value an election keeps
// at its key: written by the library's candidates and read by them, by
// followers and by the command's status.
package electionrecord

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Version is the format version written in every record.
const Version = 1

// LeaseHolderPrefix starts the ID of a record store/kubernetes makes from
// a Lease's spec (one a client-go elector wrote): its Seq is the Lease's
// renewTime in microseconds, not a count of writes.
const LeaseHolderPrefix = "lease:"

// FromLeaseSpec reports whether the record was made from a Lease's spec
// (see LeaseHolderPrefix).
func (r *Record) FromLeaseSpec() bool { return strings.HasPrefix(r.ID, LeaseHolderPrefix) }

// Record is the one value an election keeps at its key. It is never
// written with a store TTL and only ever changed by compare-and-swap, so
// the term and generation counters it carries survive releases, crashes
// and ends.
type Record struct {
	Version int    `json:"v"`
	Leader  string `json:"leader"`         // holder's name; "" when free
	ID      string `json:"id,omitempty"`   // holder's instance id; "" when free
	Term    uint64 `json:"term"`           // fencing token of the current or last term
	Seq     uint64 `json:"seq"`            // writes since the term began
	TTLms   int64  `json:"ttl_ms"`         // lease the holder promised to honour
	Gen     uint64 `json:"gen"`            // election generation; EndElection bumps it
	Ended   bool   `json:"ended,omitzero"` // the election of generation Gen has ended
	Since   string `json:"since,omitzero"` // informational: wall time the term began
	Value   string `json:"value,omitzero"` // what the holder publishes beside its name (Proclaim)
	// Successor, in a released record, is the only candidate that may take
	// the next term for SuccessorMs after the release is seen (HandOff).
	Successor   string `json:"next,omitzero"`
	SuccessorMs int64  `json:"next_ms,omitzero"`
	// SeqJumps is never written by the library. A store adapter sets it in
	// a record it makes from another writer's data whose writes raise Seq
	// by more than one (a Kubernetes Lease renewed by client-go: its Seq
	// is the renewTime), and only in a watch event that comes right after
	// the watch's previous event, no write missed between. Such an event
	// with a later Seq of the same term is the next write, as Seq+1 is for
	// the library's own records.
	SeqJumps bool `json:"seq_jumps,omitzero"`
	// Token is unique to each write. Some stores compare a top-level
	// "LastIndex" member of the JSON value in their compare-and-swap
	// (kvtools/redis with its raw codec); a fresh token in every write makes
	// that comparison exact, and it lets a writer recognise its own write.
	// The member keeps that capitalised name, unlike the others, on
	// purpose: kvtools' Lua script reads exactly "LastIndex", and a record
	// without it gets no protection there (a stale compare-and-swap
	// succeeds; store/redis TestCASComparesLastIndexMember). Renaming it,
	// even writing both names, would leave older candidates' records, or
	// newer ones, unguarded on Redis during an upgrade; so it stays.
	Token string `json:"LastIndex"`
}

// Free reports whether no one holds the record.
func (r *Record) Free() bool { return r.ID == "" }

// TTL is the lease the holder promised.
func (r *Record) TTL() time.Duration { return time.Duration(r.TTLms) * time.Millisecond }

// SuccessorWindow is how long after the release is seen only Successor
// may take the next term.
func (r *Record) SuccessorWindow() time.Duration {
	return time.Duration(max(r.SuccessorMs, 0)) * time.Millisecond
}

// NewerThan orders two records written by the library: every write bumps
// the generation, the term or the sequence.
func (r *Record) NewerThan(o *Record) bool {
	if r.Gen != o.Gen {
		return r.Gen > o.Gen
	}
	if r.Term != o.Term {
		return r.Term > o.Term
	}
	return r.Seq > o.Seq
}

// Stamp gives the record the current version and a fresh write token, and
// returns its encoding.
func (r *Record) Stamp() []byte {
	var b [8]byte
	_, _ = rand.Read(b[:])
	r.Version = Version
	r.Token = fmt.Sprintf("%d.%d.%d.%s", r.Gen, r.Term, r.Seq, hex.EncodeToString(b[:]))
	out, _ := json.Marshal(r) // a struct of strings, numbers and bools cannot fail
	return out
}

// Decode parses a stored value; ok is false for a value the library did
// not write in this format version. A record of a later version still
// yields its term and TTL (ok false), which a candidate honours.
func Decode(b []byte) (rec Record, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Record{}, false
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Version < 1 {
		return Record{}, false
	}
	if rec.Version != Version {
		return Record{Term: rec.Term, TTLms: rec.TTLms}, false
	}
	return rec, true
}
