package batch

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
)

type call struct {
	Call[string]
}

func newTestCall(ctx context.Context, key string, size int) *call {
	return &call{Call[string]{Ctx: ctx, Key: key, Size: size, Done: make(chan string, 1)}}
}

func TestBatches(t *testing.T) {
	var (
		mu      sync.Mutex
		batches [][]string
	)
	q := &Queue[*call, string]{
		Limits:   Limits{MaxCalls: 2, MaxBytes: 10, MaxSenders: 1},
		Distinct: true,
		Ended:    func(err error) string { return "ended: " + err.Error() },
	}
	q.Run = func(calls []*call) {
		var keys []string
		for _, c := range calls {
			keys = append(keys, c.Key)
			c.Done <- "ran " + c.Key
		}
		mu.Lock()
		batches = append(batches, keys)
		mu.Unlock()
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	ctx := context.Background()
	calls := []*call{
		newTestCall(ctx, "a", 1),
		newTestCall(ended, "x", 1),
		newTestCall(ctx, "a", 1), // same key: next batch
		newTestCall(ctx, "b", 1),
		newTestCall(ctx, "c", 1),  // a batch holds two
		newTestCall(ctx, "d", 20), // too big but for a batch alone
	}
	for i, c := range calls {
		if start := q.Push(c); start != (i == 0) {
			t.Fatalf("Push %d: start %v", i, start)
		}
	}
	q.Send()
	want := [][]string{{"a", "b"}, {"a", "c"}, {"d"}}
	if len(batches) != len(want) {
		t.Fatalf("batches %v, want %v", batches, want)
	}
	for i := range want {
		if len(batches[i]) != len(want[i]) || batches[i][0] != want[i][0] || batches[i][len(want[i])-1] != want[i][len(want[i])-1] {
			t.Fatalf("batches %v, want %v", batches, want)
		}
	}
	if r := q.Wait(calls[1]); r != "ended: context canceled" {
		t.Fatalf("ended call: %q", r)
	}
	if r := q.Wait(calls[5]); r != "ran d" {
		t.Fatalf("call d: %q", r)
	}
	if q.senders != 0 || len(q.queue) != 0 {
		t.Fatalf("after Send: %d senders, %d queued", q.senders, len(q.queue))
	}
}

func TestPushStartClosed(t *testing.T) {
	q := &Queue[*call, string]{Limits: Limits{MaxCalls: 1, MaxBytes: 1, MaxSenders: 1}}
	if q.PushStart(newTestCall(context.Background(), "a", 1), func(func()) bool { return false }) {
		t.Fatal("PushStart succeeded with a closed store")
	}
	if q.senders != 0 || len(q.queue) != 0 {
		t.Fatalf("after a refused start: %d senders, %d queued", q.senders, len(q.queue))
	}
}

func TestWaitEnded(t *testing.T) {
	q := &Queue[*call, string]{Ended: func(err error) string {
		if !errors.Is(err, context.DeadlineExceeded) {
			return "wrong error"
		}
		return "ended"
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	if r := q.Wait(newTestCall(ctx, "a", 1)); r != "ended" {
		t.Fatalf("Wait = %q", r)
	}
	c := newTestCall(ctx, "a", 1)
	c.Done <- "result"
	if r := q.Wait(c); r != "result" {
		t.Fatalf("Wait with a result = %q", r)
	}
}

// A long queue keeps its order, batch after batch, with calls on a key
// already in a batch left for the next one.
func TestLongQueueKeepsOrder(t *testing.T) {
	const n = 10000
	var got []string
	q := &Queue[*call, string]{
		Limits:   Limits{MaxCalls: 64, MaxBytes: 1 << 20, MaxSenders: 1},
		Distinct: true,
		Ended:    func(err error) string { return err.Error() },
	}
	q.Run = func(calls []*call) {
		for _, c := range calls {
			got = append(got, c.Key)
			c.Done <- ""
		}
	}
	ctx := context.Background()
	var want []string
	for i := range n {
		key := string(rune('a' + i%3)) // three keys: every batch holds one call per key
		q.Push(newTestCall(ctx, key, 1))
		want = append(want, key)
	}
	q.Send()
	if len(got) != n {
		t.Fatalf("%d calls ran, want %d", len(got), n)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("call %d ran as %q, want %q: order lost", i, got[i], want[i])
		}
	}
}

// BenchmarkLongQueue takes batches from a queue of 100,000 calls: the
// time per call stays flat however long the queue (each batch looks at
// the head only).
func BenchmarkLongQueue(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		q := &Queue[*call, string]{
			Limits:   Limits{MaxCalls: 64, MaxBytes: 1 << 20, MaxSenders: 1},
			Distinct: true,
			Ended:    func(err error) string { return err.Error() },
			Run: func(calls []*call) {
				for _, c := range calls {
					c.Done <- ""
				}
			},
		}
		for i := range 100000 {
			q.Push(newTestCall(ctx, strconv.Itoa(i), 1))
		}
		q.Send()
	}
}
