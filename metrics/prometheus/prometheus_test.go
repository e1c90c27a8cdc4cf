package prometheus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership"
	leaderprom "github.com/leadership-go/leadership/metrics/prometheus"
	"github.com/leadership-go/leadership/store/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openMemory(t *testing.T, name string) *memory.Store {
	t.Helper()
	kv, err := memory.Open(context.Background(), memory.Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kv.Close() })
	return kv
}

// A term's beginning and end, a store call, a watch restart and a tracked
// follower, as Prometheus sees them.
func TestMetricsExported(t *testing.T) {
	reg := prom.NewPedanticRegistry()
	m, err := leaderprom.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaderprom.New(reg); err == nil {
		t.Fatal("registered twice on one registry")
	}
	m.TermBegan("k", "a", 7, 1500*time.Millisecond)
	m.StoreCall("k", "renew", "ok", 3*time.Millisecond)
	m.WatchRestarted("k")
	const leading = `
# HELP leadership_is_leader 1 while this candidate leads the election at key, else 0.
# TYPE leadership_is_leader gauge
leadership_is_leader{key="k",node="a"} 1
# HELP leadership_term_token The fencing token of the candidate's current or last term.
# TYPE leadership_term_token gauge
leadership_term_token{key="k",node="a"} 7
# HELP leadership_watch_restarts_total Watches on the election key opened again after they ended or failed.
# TYPE leadership_watch_restarts_total counter
leadership_watch_restarts_total{key="k"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(leading), "leadership_is_leader", "leadership_term_token", "leadership_watch_restarts_total"); err != nil {
		t.Fatal(err)
	}
	m.TermEnded("k", "a", 7, leadership.ErrLeaseExpired)
	const ended = `
# HELP leadership_is_leader 1 while this candidate leads the election at key, else 0.
# TYPE leadership_is_leader gauge
leadership_is_leader{key="k",node="a"} 0
# HELP leadership_transitions_total Terms begun and ended, by transition (began, ended) and the reason a term ended.
# TYPE leadership_transitions_total counter
leadership_transitions_total{key="k",node="a",reason="",transition="began"} 1
leadership_transitions_total{key="k",node="a",reason="lease_expired",transition="ended"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(ended), "leadership_is_leader", "leadership_transitions_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(reg, "leadership_store_call_seconds", "leadership_acquire_seconds"); n != 2 {
		t.Fatalf("%d histogram series, want 2", n)
	}

	f := leadership.NewFollower(openMemory(t, "prom-follower"), "k")
	if _, _, err := f.FollowElection(); err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	untrack := m.TrackFollower("k", f)
	if n := testutil.CollectAndCount(reg, "leadership_follower_staleness_seconds"); n != 1 {
		t.Fatalf("%d staleness series, want 1", n)
	}
	untrack()
	if n := testutil.CollectAndCount(reg, "leadership_follower_staleness_seconds"); n != 0 {
		t.Fatalf("%d staleness series after untrack, want 0", n)
	}
}

// A candidate with Prometheus metrics: is_leader follows its terms.
func Example() {
	ctx := context.Background()
	kv, err := memory.Open(ctx, memory.Config{Name: "example-prometheus"})
	if err != nil {
		panic(err)
	}
	defer kv.Close()
	reg := prom.NewRegistry() // or nil, for prometheus.DefaultRegisterer
	metrics, err := leaderprom.New(reg)
	if err != nil {
		panic(err)
	}

	c := leadership.NewCandidate(kv, "jobs/report", "ada", 15*time.Second, leadership.WithMetrics(metrics))
	electedCh, _, err := c.RunForElection()
	if err != nil {
		panic(err)
	}
	for isElected := range electedCh { // false first, then true once elected
		if isElected {
			break
		}
	}
	term, _ := c.CurrentTerm()
	fmt.Println("token", term.Token)
	fmt.Println(gauge(reg, "leadership_is_leader"))
	c.Stop()
	fmt.Println(gauge(reg, "leadership_is_leader"))
	// Output:
	// token 1
	// leadership_is_leader{key="jobs/report",node="ada"} 1
	// leadership_is_leader{key="jobs/report",node="ada"} 0
}

// gauge prints the one series of the gauge called name.
func gauge(reg *prom.Registry, name string) string {
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			m := f.GetMetric()[0]
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			return fmt.Sprintf("%s{%s} %v", name, strings.Join(labels, ","), m.GetGauge().GetValue())
		}
	}
	return name + " not found"
}
