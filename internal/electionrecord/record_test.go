package electionrecord

import (
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

// A stamped claim decodes to itself with a fresh nonce each time; claims
// without a name, an id or a nonce, or of another version, are refused.
func TestClaimStampDecodes(t *testing.T) {
	c := Claim{Name: "b", ID: "x2", TTLms: 2000, Gen: 3}
	got, ok := DecodeClaim(c.Stamp())
	if !ok || got != c || got.TTL().Milliseconds() != 2000 {
		t.Fatalf("DecodeClaim(Stamp()) = %+v, %v; want %+v", got, ok, c)
	}
	nonce := c.Nonce
	if c.Stamp(); c.Nonce == nonce {
		t.Fatal("two stamps gave one nonce")
	}
	for _, v := range []string{"", "b", `{"v":1,"id":"x","LastIndex":"n"}`, `{"v":1,"name":"b","LastIndex":"n"}`,
		`{"v":1,"name":"b","id":"x"}`, `{"v":2,"name":"b","id":"x","LastIndex":"n"}`} {
		if _, ok := DecodeClaim([]byte(v)); ok {
			t.Errorf("DecodeClaim(%q) is a claim", v)
		}
	}
}

// A waiter's head start is a quarter of the holder's margin, at most a
// 40th of the TTL, and nothing for a record without a margin (a standby
// handoff, an older build) or with a nonsense one.
func TestTakeoverLead(t *testing.T) {
	for _, c := range []struct {
		ttl, margin int64
		want        time.Duration
	}{
		{2000, 200, 50 * time.Millisecond},  // the default margin, TTL/10
		{2000, 100, 25 * time.Millisecond},  // a smaller margin
		{2000, 900, 50 * time.Millisecond},  // a large margin: capped at TTL/40
		{2000, 0, 0},                        // no margin written
		{2000, -5, 0},                       // nonsense
		{0, 200, 0},                         // no TTL: a free record
		{9000, 900, 225 * time.Millisecond}, // TTL/40 again
	} {
		r := Record{TTLms: c.ttl, MarginMs: c.margin}
		if got := r.TakeoverLead(); got != c.want {
			t.Errorf("TTL %d ms, margin %d ms: lead %v, want %v", c.ttl, c.margin, got, c.want)
		}
	}
}
