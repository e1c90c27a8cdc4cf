package electiontest_test

import (
	"context"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
	"github.com/leadership-go/leadership/store/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The smoke test itself, on the in-process store.
func TestSmokeOnMemory(t *testing.T) {
	name := t.Name()
	electiontest.Smoke(t, "service/leader", func(t *testing.T) store.Store {
		s, err := memory.Open(context.Background(), memory.Config{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestNetwork(t *testing.T) {
	open := func(context.Context, []string) (store.Store, error) { return nil, nil }
	n := electiontest.Network("b", "srv", []string{"h:1"}, open)
	if n.Name() != "b" || len(n.Endpoints) != 1 || n.Endpoints[0] != "h:1" || n.Open == nil {
		t.Fatalf("Network = %+v", n)
	}
	if restarts := n.Stop != nil && n.Start != nil; restarts != storetest.RestartAllowed() {
		t.Fatalf("Stop and Start set: %v with RestartAllowed %v", restarts, storetest.RestartAllowed())
	}
}
