package electionrecord

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A stamped record decodes to itself, and every stamp is a new token.
func TestStampDecodes(t *testing.T) {
	r := Record{Leader: "a", ID: "x1", Term: 3, Seq: 2, TTLms: 1500, Gen: 1}
	first := r.Stamp()
	token := r.Token
	got, ok := Decode(first)
	if !ok || got != r {
		t.Fatalf("Decode(Stamp()) = %+v, %v; want %+v", got, ok, r)
	}
	r.Stamp()
	if r.Token == token {
		t.Fatal("two stamps gave one token")
	}
	if got.TTL().Milliseconds() != 1500 || got.Free() {
		t.Fatalf("TTL %v, Free %v", got.TTL(), got.Free())
	}
}

// Values the library did not write are not records; a later version
// yields only its term and TTL.
func TestDecodeForeignAndLater(t *testing.T) {
	for _, v := range []string{"", "  ", "leader-a", "[1]", `{"v":0}`, `{"v":"x"}`, "{"} {
		if _, ok := Decode([]byte(v)); ok {
			t.Errorf("Decode(%q) is a record", v)
		}
	}
	got, ok := Decode([]byte(` {"v":2,"leader":"future","term":41,"ttl_ms":400} `))
	if ok || got != (Record{Term: 41, TTLms: 400}) {
		t.Fatalf("later version: %+v, %v", got, ok)
	}
}

// Records are ordered by generation, then term, then sequence.
func TestNewerThan(t *testing.T) {
	base := Record{Gen: 1, Term: 5, Seq: 5}
	for _, newer := range []Record{{Gen: 2}, {Gen: 1, Term: 6}, {Gen: 1, Term: 5, Seq: 6}} {
		if !newer.NewerThan(&base) || base.NewerThan(&newer) {
			t.Errorf("%+v is not newer than %+v", newer, base)
		}
	}
	if base.NewerThan(&base) {
		t.Error("a record is newer than itself")
	}
}

// A record written by an older build, with the fields of the standby
// handoff and the takeover lead (margin_ms, claim), still decodes: the
// fields are ignored, and a waiter gives its holder the whole TTL.
func TestOlderRecordWithStandbyFieldsDecodes(t *testing.T) {
	v := `{"v":1,"leader":"a","id":"x1","term":7,"seq":2,"ttl_ms":2000,"gen":1,"margin_ms":200,"claim":"n1","LastIndex":"1.7.2.ab"}`
	rec, ok := Decode([]byte(v))
	if !ok || rec.Leader != "a" || rec.Term != 7 || rec.TTL() != 2*time.Second {
		t.Fatalf("Decode(%s) = %+v, %v", v, rec, ok)
	}
	if out := string(rec.Stamp()); strings.Contains(out, "margin_ms") || strings.Contains(out, "claim") {
		t.Fatalf("a record written again keeps the old fields: %s", out)
	}
}

// SeqJumps, which only store adapters set, is absent from the library's
// records (their encoding is unchanged) and kept by those that have it.
func TestSeqJumps(t *testing.T) {
	r := Record{Leader: "a", ID: "x1", Term: 3, Seq: 2, TTLms: 1500}
	if b := r.Stamp(); strings.Contains(string(b), "seq_jumps") {
		t.Fatalf("a record of the library encodes SeqJumps: %s", b)
	}
	r.SeqJumps = true
	if got, ok := Decode(r.Stamp()); !ok || got != r {
		t.Fatalf("Decode(Stamp()) = %+v, %v; want %+v", got, ok, r)
	}
}
