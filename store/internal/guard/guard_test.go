package guard

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// deaf is a store that ignores contexts, as some backends do: its Get
// blocks until released, and its watch sends without looking at ctx and
// closes only when released.
type deaf struct {
	store.Store
	release chan struct{}
}

func (d *deaf) Get(context.Context, string, *store.ReadOptions) (*store.KVPair, error) {
	<-d.release
	return &store.KVPair{Key: "k", Value: []byte("v"), LastIndex: 1}, nil
}

func (d *deaf) Watch(context.Context, string, *store.ReadOptions) (<-chan *store.KVPair, error) {
	ch := make(chan *store.KVPair)
	go func() {
		defer close(ch)
		for i := 0; ; i++ {
			select {
			case <-d.release:
				return
			default:
			}
			ch <- &store.KVPair{Key: "k", Value: []byte("v"), LastIndex: uint64(i)}
		}
	}()
	return ch, nil
}

func (d *deaf) Close() error { return nil }

func TestCallReturnsAtDeadline(t *testing.T) {
	d := &deaf{release: make(chan struct{})}
	g := Wrap(d, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := g.Get(ctx, "k", nil)
	if !errors.Is(err, ErrAbandoned) || !errors.Is(err, store.ErrNotReachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	// At the 50ms deadline, not when the backend returns (never, here):
	// only a hang goes past the generous bound.
	took := time.Since(start)
	t.Logf("returned after %v", took)
	if took > 10*time.Second {
		t.Fatalf("returned after %v: hung", took)
	}
	// Without a deadline, the default timeout applies.
	if _, err := g.Get(context.Background(), "k", nil); !errors.Is(err, ErrAbandoned) {
		t.Fatalf("default timeout: %v", err)
	}
	close(d.release) // the backend returns at last; Close waits for it
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if p, err := Wrap(d, time.Second).Get(context.Background(), "k", nil); err != nil || string(p.Value) != "v" {
		t.Fatalf("a call that finishes: %v %v", p, err)
	}
}

func TestWatchReaderWalksAway(t *testing.T) {
	d := &deaf{release: make(chan struct{})}
	g := Wrap(d, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := g.Watch(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel() // the reader leaves without draining
	for range ch {
	}
	close(d.release) // the backend's sender can finish: it is being drained
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestAwait(t *testing.T) {
	done := make(chan struct{})
	if Await(done, 10*time.Millisecond) {
		t.Fatal("Await of an open channel: true")
	}
	close(done)
	if !Await(done, time.Minute) || !Await(done, 0) {
		t.Fatal("Await of a closed channel: false")
	}
	var wg sync.WaitGroup
	release := make(chan struct{})
	wg.Go(func() { <-release })
	if AwaitGroup(&wg, 10*time.Millisecond) {
		t.Fatal("AwaitGroup of a running goroutine: true")
	}
	close(release)
	if !AwaitGroup(&wg, 0) {
		t.Fatal("AwaitGroup without bound: false")
	}
}

// counting is deaf, counting the Gets that reached it.
type counting struct {
	*deaf
	gets atomic.Int64
}

func (c *counting) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	c.gets.Add(1)
	return c.deaf.Get(ctx, key, opts)
}

// A store closed while calls keep being made on it (a candidate whose
// client is closed under it) waits for the calls running, and lets the
// later ones run: no data race between them (go test -race).
func TestCloseWhileCalling(t *testing.T) {
	d := &counting{deaf: &deaf{release: make(chan struct{})}}
	g := Wrap(d, time.Second)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				_, _ = g.Get(ctx, "k", nil)
				cancel()
			}
		}()
	}
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	<-g.closing.Done() // Close has begun: calls now start while it waits
	for before := d.gets.Load(); d.gets.Load() < before+10; {
		runtime.Gosched()
	}
	close(d.release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if !Await(g.calls.idle(), 0) {
		t.Fatal("calls still counted")
	}
}
