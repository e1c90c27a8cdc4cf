package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// record is a value as the engine stores it: JSON with a LastIndex field,
// which kvtools' compare-and-swap (and the batched one) compares.
func record(index int, v string) []byte {
	return fmt.Appendf(nil, `{"LastIndex":%d,"v":%q}`, index, v)
}

// putRecords writes n records under base and returns them as read.
func putRecords(ctx context.Context, t *testing.T, s store.Store, base string, n int) []*store.KVPair {
	t.Helper()
	prev := make([]*store.KVPair, n)
	for i := range n {
		k := fmt.Sprintf("%s/%d", base, i)
		if err := s.Put(ctx, k, record(1, "v0"), nil); err != nil {
			t.Fatal(err)
		}
		p, err := s.Get(ctx, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		prev[i] = p
	}
	return prev
}

// Compare-and-swaps and reads made at once on one client go in shared
// requests (one script, one MGET), and each keeps its own outcome: a
// stale one fails alone, the others land, and every read sees its own key.
func TestBatchedCallsKeepTheirOwnOutcome(t *testing.T) {
	s := openClient(t, serverConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := uniqueKey(t)
	const n = 300
	prev := putRecords(ctx, t, s, base, n)
	// Every third key changes under its caller's feet; every fifth is gone.
	for i := range n {
		switch {
		case i%3 == 0:
			if err := s.Put(ctx, prev[i].Key, record(2, "other"), nil); err != nil {
				t.Fatal(err)
			}
		case i%5 == 0:
			if err := s.Delete(ctx, prev[i].Key); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	reads := make([]*store.KVPair, n)
	readErrs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, _, errs[i] = s.AtomicPut(ctx, prev[i].Key, record(3, fmt.Sprintf("v1-%d", i)), prev[i], &store.WriteOptions{TTL: time.Minute})
		})
		wg.Go(func() { reads[i], readErrs[i] = s.Get(ctx, prev[i].Key, nil) })
	}
	wg.Wait()
	for i := range n {
		stale, gone := i%3 == 0, i%3 != 0 && i%5 == 0
		switch {
		case stale && !errors.Is(errs[i], store.ErrKeyModified):
			t.Errorf("key %d changed since its previous: %v, want ErrKeyModified", i, errs[i])
		case gone && !errors.Is(errs[i], store.ErrKeyNotFound):
			t.Errorf("key %d deleted: %v, want ErrKeyNotFound", i, errs[i])
		case !stale && !gone && errs[i] != nil:
			t.Errorf("key %d: %v", i, errs[i])
		}
		switch {
		case gone && !errors.Is(readErrs[i], store.ErrKeyNotFound):
			t.Errorf("read of deleted key %d: %v, want ErrKeyNotFound", i, readErrs[i])
		case !gone && (readErrs[i] != nil || reads[i].Key != prev[i].Key):
			t.Errorf("read %d: %v, %+v", i, readErrs[i], reads[i])
		}
		got, err := s.Get(ctx, prev[i].Key, nil)
		var want []byte
		switch {
		case gone:
			if !errors.Is(err, store.ErrKeyNotFound) {
				t.Errorf("key %d: %v, want it gone", i, err)
			}
			continue
		case err != nil:
			t.Fatal(err)
		case stale:
			want = record(2, "other")
		default:
			want = record(3, fmt.Sprintf("v1-%d", i))
		}
		if string(got.Value) != string(want) {
			t.Errorf("key %d holds %s, want %s", i, got.Value, want)
		}
	}
}

// A value that is not JSON cannot have its LastIndex compared: the
// compare-and-swap fails with an error of its own, not ErrKeyModified,
// and writes nothing, as kvtools' script does.
func TestBatchedSwapRefusesValuesNotJSON(t *testing.T) {
	s := openClient(t, serverConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k := uniqueKey(t)
	if err := s.Put(ctx, k, []byte("plain"), nil); err != nil {
		t.Fatal(err)
	}
	p, err := s.Get(ctx, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok, _, err := s.AtomicPut(ctx, k, record(1, "new"), p, nil)
	if ok || err == nil || errors.Is(err, store.ErrKeyModified) {
		t.Fatalf("AtomicPut over a value not JSON: %v, %v; want an error other than ErrKeyModified", ok, err)
	}
	if got, err := s.Get(ctx, k, nil); err != nil || string(got.Value) != "plain" {
		t.Fatalf("the key holds %+v, %v; want it untouched", got, err)
	}
}

// A key of another type fails its own call in a batch, as GET and SET
// fail on it alone (WRONGTYPE), and is not read as missing; the calls
// batched with it keep their outcomes. A JSON string has no LastIndex, as
// in kvtools' script: a swap over it proceeds.
func TestBatchedCallsOnAKeyOfAnotherType(t *testing.T) {
	cfg := serverConfig(t)
	s := openClient(t, cfg)
	rc := rawClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := uniqueKey(t)
	const n = 40
	prev := putRecords(ctx, t, s, base, n)
	hashKey := prev[7].Key
	if err := rc.Del(ctx, hashKey).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.HSet(ctx, hashKey, "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	readErrs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, _, errs[i] = s.AtomicPut(ctx, prev[i].Key, record(2, "v1"), prev[i], nil) })
		wg.Go(func() { _, readErrs[i] = s.Get(ctx, prev[i].Key, nil) })
	}
	wg.Wait()
	for i := range n {
		if i == 7 {
			for what, err := range map[string]error{"AtomicPut": errs[i], "Get": readErrs[i]} {
				if err == nil || errors.Is(err, store.ErrKeyNotFound) || errors.Is(err, store.ErrKeyModified) {
					t.Errorf("%s on a hash: %v, want the server's WRONGTYPE", what, err)
				}
			}
			continue
		}
		if errs[i] != nil || readErrs[i] != nil {
			t.Errorf("key %d: AtomicPut %v, Get %v", i, errs[i], readErrs[i])
		}
	}

	k := base + "/string"
	if err := s.Put(ctx, k, []byte(`"just a string"`), nil); err != nil {
		t.Fatal(err)
	}
	p, err := s.Get(ctx, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := s.AtomicPut(ctx, k, record(1, "mine"), p, nil); !ok || err != nil {
		t.Fatalf("AtomicPut over a JSON string: %v, %v; want it written, as kvtools does", ok, err)
	}
}
