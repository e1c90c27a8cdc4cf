package storetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

var keySeq atomic.Uint64

// FreshKey returns a key that no other test, run or test process uses,
// ending in name: "leadership-test/<backend>-<pid>-<time>-<n>/<name>".
// Everything a test writes under Dir(FreshKey(...)) is its own.
func FreshKey(backend, name string) string {
	return fmt.Sprintf("leadership-test/%s-%d-%d-%d/%s", backend, os.Getpid(), time.Now().UnixNano()%1e9, keySeq.Add(1), name)
}

// TestKey is FreshKey with the name of the test t.
func TestKey(t testing.TB, backend string) string {
	return FreshKey(backend, t.Name())
}

// Dir returns the directory part of key: what comes before its last "/",
// or key itself if it has none.
func Dir(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return key
}

// CleanupTree deletes the tree at dir through s when the test ends,
// logging a failure.
func CleanupTree(t testing.TB, s store.Store, dir string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.DeleteTree(ctx, dir); err != nil {
			t.Logf("cleanup %s: %v", dir, err)
		}
	})
}

// Keys returns the keys of pairs, in order (an empty slice for none).
func Keys(pairs []*store.KVPair) []string {
	out := make([]string, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, p.Key)
	}
	return out
}
