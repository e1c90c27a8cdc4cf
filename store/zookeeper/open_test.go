package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

func TestOpenUnreachable(t *testing.T) {
	storetest.NoLeaks(t)
	storetest.OpenUnreachable(t, func(ctx context.Context, endpoints []string, dial time.Duration) (store.Store, error) {
		return Open(ctx, Config{Endpoints: endpoints, DialTimeout: dial})
	}, storetest.Unreachable{Names: storetest.NamesFirstEndpoint, WrapsDeadline: true})
}

func TestOpenUnreachableEnsemble(t *testing.T) {
	storetest.NoLeaks(t)
	h1, h2 := storetest.NewHungServer(t), storetest.NewHungServer(t)
	eps := []string{h1.Addr(), storetest.RefusedAddr(t), h2.Addr()}
	// About DialTimeout, plus closing the client (its close request waits
	// up to 1s for a server that never connected): only a hang goes past
	// ten times that.
	storetest.ExpectUnreachable(t, eps, storetest.UnreachableBound(2*time.Second), storetest.NamesFirstEndpoint, func() (store.Store, error) {
		return Open(context.Background(), Config{Endpoints: eps, DialTimeout: 2 * time.Second})
	})
	if n := h1.OpenConns() + h2.OpenConns(); n != 0 {
		t.Errorf("%d connections to the hung servers left open", n)
	}
}

// A store whose server stops answering after Open: calls return by their
// deadline, a watch can be cancelled, and Close leaves nothing running.
func TestCutAfterOpen(t *testing.T) {
	eps := servers(t, envSingle)
	storetest.NoLeaks(t)
	fwd := electiontest.Forwarder(t, eps[0])
	s, err := Open(context.Background(), Config{Endpoints: []string{fwd.Addr()}, RequestTimeout: 300 * time.Millisecond, SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	key := freshKey("cut")
	storetest.CleanupTree(t, openSingle(t), storetest.Dir(key))
	storetest.CutAfterOpen(t, s, key, fwd.Cut)
}
