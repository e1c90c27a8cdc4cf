package leadershiptest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/memory"
)

// memoryBackend runs the suite on the embedded store: every client is a
// handle of one named backend, Cut and Heal are memfault's Disconnect and Reconnect,
// Vanish is Close, and the server stops and starts with StopServer and
// StartServer (after LoseData when loseData is set, as a server without
// persistence comes back).
type memoryBackend struct {
	name     string
	loseData bool
}

func (b memoryBackend) Name() string { return "memory" }

func (b memoryBackend) TTL() time.Duration { return time.Second }

func (b memoryBackend) Client(t *testing.T) *leadershiptest.Client {
	h, err := memory.Open(context.Background(), memory.Config{Name: b.name})
	if err != nil {
		t.Fatalf("open memory store %q: %v", b.name, err)
	}
	return &leadershiptest.Client{
		Store:  h,
		Cut:    func() { memfault.Disconnect(h) },
		Heal:   func() { memfault.Reconnect(h) },
		Vanish: func() { _ = h.Close() },
	}
}

func (b memoryBackend) StopServer(*testing.T) { memfault.StopServer(b.name) }

func (b memoryBackend) StartServer(*testing.T) {
	if b.loseData {
		memfault.LoseData(b.name)
	}
	memfault.StartServer(b.name)
}

var (
	_ leadershiptest.Backend   = memoryBackend{}
	_ leadershiptest.Restarter = memoryBackend{}
)

// shortSuite shrinks the suite's soak-like counts under -short: the
// ManyElections subtest and the elections before a wipe take most of a
// run on the embedded store.
func shortSuite(t *testing.T) {
	if !testing.Short() {
		return
	}
	many, before := leadershiptest.ManyElections, leadershiptest.ElectionsBeforeWipe
	leadershiptest.ManyElections, leadershiptest.ElectionsBeforeWipe = 100, 10
	t.Cleanup(func() { leadershiptest.ManyElections, leadershiptest.ElectionsBeforeWipe = many, before })
}

func TestMemory(t *testing.T) {
	shortSuite(t)
	leadershiptest.Run(t, memoryBackend{name: fmt.Sprintf("leadershiptest-%d", time.Now().UnixNano())})
}

// The same suite on a store that loses its data when it restarts.
func TestMemoryLosingDataOnRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TestMemory runs the suite once; the root package's TestStoreThatLostItsDataRecovers and the simulator cover a store that loses its data")
	}
	leadershiptest.Run(t, memoryBackend{name: fmt.Sprintf("leadershiptest-lose-%d", time.Now().UnixNano()), loseData: true})
}
