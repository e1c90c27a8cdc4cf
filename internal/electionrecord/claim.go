package electionrecord

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Claim is what a waiting candidate that runs with standby writes beside
// the election key: "write the next term for me". A leader that steps
// down reads it and writes the next term for the claimant, which takes it
// from the record without a write of its own.
type Claim struct {
	Version int    `json:"v"`
	Name    string `json:"name"`     // the claimant's candidate name
	ID      string `json:"id"`       // the claimant's instance id
	TTLms   int64  `json:"ttl_ms"`   // the lease the claimant would promise
	Gen     uint64 `json:"gen"`      // the election generation the claimant joined
	EveryMs int64  `json:"every_ms"` // how often the claimant writes its claim again
	// Term is the term of the record the claimant saw when it claimed: a
	// term of its own above it consumed the claim.
	Term uint64 `json:"term,omitempty"`
	// Nonce is unique to each write of a claim; the record written for the
	// claim carries it (Record.Claim). Named like Record.Token for the
	// stores that compare a top-level "LastIndex" member.
	Nonce string `json:"LastIndex"`
}

// Every is how often the claimant writes its claim again.
func (c *Claim) Every() time.Duration { return time.Duration(c.EveryMs) * time.Millisecond }

// TTL is the lease the claimant would promise.
func (c *Claim) TTL() time.Duration { return time.Duration(c.TTLms) * time.Millisecond }

// Stamp gives the claim the current version and a fresh nonce, and returns
// its encoding.
func (c *Claim) Stamp() []byte {
	var b [12]byte
	_, _ = rand.Read(b[:])
	c.Version = Version
	c.Nonce = hex.EncodeToString(b[:])
	out, _ := json.Marshal(c) // strings and numbers cannot fail
	return out
}

// DecodeClaim parses a stored claim; ok is false for anything else,
// including a claim without a name, an id or a nonce.
func DecodeClaim(b []byte) (c Claim, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Claim{}, false
	}
	if err := json.Unmarshal(b, &c); err != nil || c.Version != Version || c.Name == "" || c.ID == "" || c.Nonce == "" {
		return Claim{}, false
	}
	return c, true
}
