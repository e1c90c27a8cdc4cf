package postgres

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"math"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// childRange returns the bounds [lo, hi) that select, in byte order (the
// key column uses the "C" collation), exactly the keys below dir != "".
func childRange(dir string) (lo, hi string) {
	return dir + "/", dir + "0" // '0' is the byte after '/'
}

// ttlMillis is the ttl_ms column for ttl: NULL (nil) without TTL, else
// whole milliseconds rounded up.
func ttlMillis(ttl time.Duration) any {
	if ttl <= 0 {
		return nil
	}

	return int64((ttl + time.Millisecond - 1) / time.Millisecond)
}

// index converts a LastIndex to the idx column; ok is false for values the
// column cannot hold (such an index cannot match).
func index(i uint64) (int64, bool) {
	if i > math.MaxInt64 {
		return 0, false
	}

	return int64(i), true
}

// nonNil returns v, or an empty slice for nil (the value column is NOT NULL).
func nonNil(v []byte) []byte {
	if v == nil {
		return []byte{}
	}

	return v
}

// samePair reports whether a and b are the same state of a key: both
// absent, or the same value at the same index. (The index alone is not
// enough: a server that lost its data hands out the same indexes again.)
func samePair(a, b *store.KVPair) bool {
	if (a.Value == nil) != (b.Value == nil) {
		return false
	}

	return a.Value == nil || (a.LastIndex == b.LastIndex && bytes.Equal(a.Value, b.Value))
}

// newID returns a random identifier for a handle or a lock acquisition.
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])

	return hex.EncodeToString(b[:])
}
