package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
)

// readOnly is a store that lets its client read and refuses its writes,
// as a store does for a login with read rights only.
type readOnly struct{ store.Store }

func (readOnly) AtomicPut(context.Context, string, []byte, *store.KVPair, *store.WriteOptions) (bool, *store.KVPair, error) {
	return false, nil, fmt.Errorf("%w: no right to write", lstore.ErrPermission)
}

// TestRunRefusedWrite checks that run whose login may read the election
// but not write it ends with exit 1 and the store's refusal, rather than
// campaigning on forever (its first read works, so it starts).
func TestRunRefusedWrite(t *testing.T) {
	storeURL, _ := memoryURL(t)
	old := openStoreFunc
	openStoreFunc = func(ctx context.Context, url string) (store.Store, error) {
		kv, err := old(ctx, url)
		if err != nil {
			return nil, err
		}
		return readOnly{kv}, nil
	}
	t.Cleanup(func() { openStoreFunc = old })
	code, _, errOut := runCLI(t, "run", "--store", storeURL, "--key", "k", "--name", "n", "--", "true")
	if code != exitFailure || !strings.Contains(errOut, "the store refused this candidate") || !strings.Contains(errOut, "no right to write") {
		t.Fatalf("exit %d, stderr %q; want exit %d and the refusal", code, errOut, exitFailure)
	}
}
