package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// Compare-and-swaps and reads made at once on one client go in shared
// transactions, and each keeps its own outcome: a stale one fails alone,
// the others land, and every read sees its own key.
func TestBatchedCallsKeepTheirOwnOutcome(t *testing.T) {
	s := openClient(t, serverConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := uniqueKey(t)
	const n = 300
	prev := make([]*store.KVPair, n)
	for i := range n {
		k := fmt.Sprintf("%s/%d", base, i)
		if err := s.Put(ctx, k, []byte("v0"), nil); err != nil {
			t.Fatal(err)
		}
		p, err := s.Get(ctx, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		prev[i] = p
	}
	// Every third key changes under its caller's feet.
	for i := 0; i < n; i += 3 {
		if err := s.Put(ctx, prev[i].Key, []byte("other"), nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	reads := make([]*store.KVPair, n)
	readErrs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, _, errs[i] = s.AtomicPut(ctx, prev[i].Key, []byte(fmt.Sprintf("v1-%d", i)), prev[i], nil)
		})
		wg.Go(func() { reads[i], readErrs[i] = s.Get(ctx, prev[i].Key, nil) })
	}
	wg.Wait()
	for i := range n {
		stale := i%3 == 0
		switch {
		case stale && !errors.Is(errs[i], store.ErrKeyModified):
			t.Errorf("key %d changed since its previous: %v, want ErrKeyModified", i, errs[i])
		case !stale && errs[i] != nil:
			t.Errorf("key %d: %v", i, errs[i])
		}
		if readErrs[i] != nil || reads[i].Key != prev[i].Key {
			t.Errorf("read %d: %v, %+v", i, readErrs[i], reads[i])
		}
		got, err := s.Get(ctx, prev[i].Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("v1-%d", i)
		if stale {
			want = "other"
		}
		if string(got.Value) != want {
			t.Errorf("key %d holds %q, want %q", i, got.Value, want)
		}
	}
	if _, err := s.Get(ctx, base+"/missing", nil); !errors.Is(err, store.ErrKeyNotFound) {
		t.Errorf("missing key: %v, want ErrKeyNotFound", err)
	}
}
