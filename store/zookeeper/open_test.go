package zookeeper

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/leadershiptest"
)

// openUnreachable opens endpoints that do not answer and checks the error
// and the time taken.
func openUnreachable(t *testing.T, endpoints []string, dial time.Duration) {
	t.Helper()
	start := time.Now()
	s, err := Open(context.Background(), Config{Endpoints: endpoints, DialTimeout: dial})
	took := time.Since(start)
	if err == nil {
		_ = s.Close()
		t.Fatal("Open succeeded")
	}
	t.Logf("Open(%v) failed after %v: %v", endpoints, took, err)
	if !errors.Is(err, store.ErrNotReachable) {
		t.Errorf("error %v does not match store.ErrNotReachable", err)
	}
	var ue *UnreachableError
	if !errors.As(err, &ue) || len(ue.Endpoints) != len(endpoints) || ue.Endpoints[0] != endpoints[0] {
		t.Errorf("error %#v is not an *UnreachableError naming %v", err, endpoints)
	}
	// About DialTimeout, plus closing the client (its close request waits
	// up to 1s for a server that never connected): only a hang goes past
	// ten times that.
	if took > 10*dial {
		t.Errorf("Open took %v with DialTimeout %v: hung", took, dial)
	}
}

func TestOpenRefused(t *testing.T) {
	noLeaks(t)
	openUnreachable(t, []string{refusedAddr(t)}, time.Second)
}

func TestOpenHung(t *testing.T) {
	noLeaks(t)
	h := newHungServer(t)
	openUnreachable(t, []string{h.addr()}, time.Second)
	if h.accepted() == 0 {
		t.Fatal("the client never connected to the hung server")
	}
	if n := h.openConns(); n != 0 {
		t.Errorf("%d connections to the hung server left open", n)
	}
}

func TestOpenUnreachableEnsemble(t *testing.T) {
	noLeaks(t)
	h1, h2 := newHungServer(t), newHungServer(t)
	openUnreachable(t, []string{h1.addr(), refusedAddr(t), h2.addr()}, 2*time.Second)
	if n := h1.openConns() + h2.openConns(); n != 0 {
		t.Errorf("%d connections to the hung servers left open", n)
	}
}

func TestOpenCancelled(t *testing.T) {
	noLeaks(t)
	h := newHungServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := Open(ctx, Config{Endpoints: []string{h.addr()}, DialTimeout: time.Minute})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open succeeded")
	}
	took := time.Since(start)
	t.Logf("Open under a 300ms context: %v after %v", err, took)
	if took > hangBound || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Open under a 300ms context: %v after %v, want context.DeadlineExceeded well before DialTimeout", err, took)
	}
}

// A store whose server stops answering after Open: calls return by their
// deadline, a watch can be cancelled, and Close leaves nothing running.
func TestCutAfterOpen(t *testing.T) {
	eps := servers(t, envSingle)
	noLeaks(t)
	fwd, err := leadershiptest.NewForwarder(eps[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fwd.Close() })
	s, err := Open(context.Background(), Config{Endpoints: []string{fwd.Addr()}, RequestTimeout: 300 * time.Millisecond, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	key := freshKey("cut")
	cleanup(t, openSingle(t), prefixOf(key))
	if _, _, err := s.AtomicPut(context.Background(), key, []byte("v"), nil, nil); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(context.Background())
	events, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-events
	fwd.Cut()

	// Each call ends at its deadline (context.DeadlineExceeded), however
	// long that takes on a loaded machine: only a hang fails the bound.
	start := time.Now()
	_, err = s.Get(context.Background(), key, nil) // no deadline: RequestTimeout
	took := time.Since(start)
	t.Logf("Get while cut: %v after %v", err, took)
	if !errors.Is(err, store.ErrNotReachable) || !errors.Is(err, context.DeadlineExceeded) || took > hangBound {
		t.Errorf("Get while cut: %v after %v, want store.ErrNotReachable at the 300ms RequestTimeout", err, took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, _, err = s.AtomicPut(ctx, key, []byte("w"), &store.KVPair{Key: key, LastIndex: 0}, nil)
	took = time.Since(start)
	t.Logf("AtomicPut while cut: %v after %v", err, took)
	if !errors.Is(err, store.ErrNotReachable) || !errors.Is(err, context.DeadlineExceeded) || took > hangBound {
		t.Errorf("AtomicPut while cut: %v after %v, want store.ErrNotReachable at the 100ms deadline", err, took)
	}
	start = time.Now()
	wcancel()
	select {
	case <-drained(events):
		t.Logf("the watch closed %v after its cancel", time.Since(start))
	case <-time.After(hangBound):
		t.Errorf("the watch still open %v after its cancel", hangBound)
	}
	start = time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close while cut took %v", time.Since(start))
	if _, err := s.Get(context.Background(), key, nil); !errors.Is(err, store.ErrNotReachable) {
		t.Errorf("Get after Close: %v, want store.ErrNotReachable", err)
	}
}
