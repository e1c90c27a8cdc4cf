package kv

import (
	"strings"

	"github.com/kvtools/valkeyrie/store"
)

// NormalizeKey trims key's leading and trailing slashes.
func NormalizeKey(key string) string {
	return strings.Trim(key, "/")
}

// Under reports whether key is strictly below dir ("" is the root).
func Under(key, dir string) bool {
	if dir == "" {
		return key != ""
	}

	return strings.HasPrefix(key, dir+"/")
}

// CloneBytes returns a non-nil copy of v.
func CloneBytes(v []byte) []byte {
	out := make([]byte, len(v))
	copy(out, v)

	return out
}

// ClonePair returns a copy of p that shares nothing with it (a nil value
// stays nil).
func ClonePair(p *store.KVPair) *store.KVPair {
	c := &store.KVPair{Key: p.Key, LastIndex: p.LastIndex}
	if p.Value != nil {
		c.Value = CloneBytes(p.Value)
	}

	return c
}
