package zookeeper

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/storetest"
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
	storetest.NoLeaks(t)
	openUnreachable(t, []string{storetest.RefusedAddr(t)}, time.Second)
}

func TestOpenHung(t *testing.T) {
	storetest.NoLeaks(t)
	h := storetest.NewHungServer(t)
	openUnreachable(t, []string{h.Addr()}, time.Second)
	if h.Accepted() == 0 {
		t.Fatal("the client never connected to the hung server")
	}
	if n := h.OpenConns(); n != 0 {
		t.Errorf("%d connections to the hung server left open", n)
	}
}

func TestOpenUnreachableEnsemble(t *testing.T) {
	storetest.NoLeaks(t)
	h1, h2 := storetest.NewHungServer(t), storetest.NewHungServer(t)
	openUnreachable(t, []string{h1.Addr(), storetest.RefusedAddr(t), h2.Addr()}, 2*time.Second)
	if n := h1.OpenConns() + h2.OpenConns(); n != 0 {
		t.Errorf("%d connections to the hung servers left open", n)
	}
}

func TestOpenCancelled(t *testing.T) {
	storetest.NoLeaks(t)
	h := storetest.NewHungServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := Open(ctx, Config{Endpoints: []string{h.Addr()}, DialTimeout: time.Minute})
	if err == nil {
		_ = s.Close()
		t.Fatal("Open succeeded")
	}
	took := time.Since(start)
	t.Logf("Open under a 300ms context: %v after %v", err, took)
	if took > storetest.HangBound || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Open under a 300ms context: %v after %v, want context.DeadlineExceeded well before DialTimeout", err, took)
	}
}

// A store whose server stops answering after Open: calls return by their
// deadline, a watch can be cancelled, and Close leaves nothing running.
func TestCutAfterOpen(t *testing.T) {
	eps := servers(t, envSingle)
	storetest.NoLeaks(t)
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
	storetest.CleanupTree(t, openSingle(t), storetest.Dir(key))
	storetest.CutAfterOpen(t, s, key, fwd.Cut)
}
