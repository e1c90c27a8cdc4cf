package leadership

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// recordedMetrics keeps every measurement, as lines.
type recordedMetrics struct {
	mu     sync.Mutex
	events []string
	waited []time.Duration
}

func (m *recordedMetrics) add(format string, a ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, fmt.Sprintf(format, a...))
}

func (m *recordedMetrics) TermBegan(key, node string, token uint64, waited time.Duration) {
	m.add("began %s %s %d", key, node, token)
	m.mu.Lock()
	m.waited = append(m.waited, waited)
	m.mu.Unlock()
}

func (m *recordedMetrics) TermEnded(key, node string, token uint64, reason Reason) {
	m.add("ended %s %s %d %v", key, node, token, reason)
}

func (m *recordedMetrics) StoreCall(key, op, outcome string, _ time.Duration) {
	m.add("call %s %s %s", key, op, outcome)
}

func (m *recordedMetrics) WatchRestarted(key string) { m.add("watch restarted %s", key) }

func (m *recordedMetrics) has(event string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.events {
		if e == event {
			return true
		}
	}
	return false
}

// The engine reports terms with their reasons, its store calls by
// operation and outcome, and watch restarts.
func TestMetricsHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		m := &recordedMetrics{}
		a := NewCandidate(c.handle(), "metrics", "a", time.Second, WithMetrics(m))
		t.Cleanup(a.Stop)
		term, err := a.awaitTerm(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "a renewal", func() bool { return m.has("call metrics renew ok") })
		a.Resign()
		eventually(t, "the end", func() bool { return m.has(fmt.Sprintf("ended metrics a %d %v", term.Token, ErrResigned)) })
		eventually(t, "the second term", func() bool { return m.has(fmt.Sprintf("began metrics a %d", term.Token+1)) })
		stopServer(c.name)
		eventually(t, "a failed read", func() bool { return m.has("call metrics get error") || m.has("call metrics renew error") })
		startServer(c.name)
		a.Stop()

		// A watch that the store ends is opened again, and counted.
		w := &endableWatches{Backend: c.handle()}
		f := NewFollower(w, "metrics", WithMetrics(m))
		if _, _, err := f.FollowElection(); err != nil {
			t.Fatal(err)
		}
		defer f.Stop()
		w.endAll()
		eventually(t, "the watch reopened", func() bool { return m.has("watch restarted metrics") })
		for _, want := range []string{
			fmt.Sprintf("began metrics a %d", term.Token),
			"call metrics get ok", "call metrics acquire ok", "call metrics watch ok", "call metrics release ok",
		} {
			if !m.has(want) {
				t.Errorf("no %q in %q", want, m.events)
			}
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.waited) < 2 || m.waited[1] <= 0 {
			t.Errorf("waited %v: the second term waited out the holdoff", m.waited)
		}
	})
}

// endableWatches is a store whose watches the test can end.
type endableWatches struct {
	Backend
	mu      sync.Mutex
	cancels []context.CancelFunc
}

func (s *endableWatches) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.cancels = append(s.cancels, cancel)
	s.mu.Unlock()
	return s.Backend.Watch(ctx, key, opts)
}

// endAll ends every watch opened so far.
func (s *endableWatches) endAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cancel := range s.cancels {
		cancel()
	}
}

// The default metrics and a nil Metrics.
func TestMetricsOption(t *testing.T) {
	h := newCluster(t).handle()
	if _, err := checkedCandidate(h, "k", "a", time.Second, WithMetrics(nil)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("nil metrics: %v", err)
	}
	var typedNil *recordedMetrics
	if _, err := checkedFollower(h, "k", WithMetrics(typedNil)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("typed nil metrics: %v", err)
	}
	f, err := checkedFollower(h, "k", WithMetrics(noMetrics{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.FollowElection(); err != nil {
		t.Fatal(err)
	}
	if s := f.Staleness(); s < 0 || s > wait {
		t.Fatalf("staleness %v right after the first read", s)
	}
	f.Stop()
}
