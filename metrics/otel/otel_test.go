package otel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership"
	leaderotel "github.com/leadership-go/leadership/metrics/otel"
	"github.com/leadership-go/leadership/store/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collect reads every metric of reader by name.
func collect(t testing.TB, reader *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// gaugeValue is the value of the one data point of an Int64Gauge.
func gaugeValue(t testing.TB, m metricdata.Metrics) int64 {
	g, ok := m.Data.(metricdata.Gauge[int64])
	if !ok || len(g.DataPoints) != 1 {
		t.Fatalf("%s: %#v", m.Name, m.Data)
	}
	return g.DataPoints[0].Value
}

// newMetrics makes the Metrics on a provider read by the returned reader,
// shut down when the test ends.
func newMetrics(t *testing.T) (*leaderotel.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	m, err := leaderotel.New(provider)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.Close()
		_ = provider.Shutdown(context.Background())
	})
	return m, reader
}

func TestInstrumentsRecord(t *testing.T) {
	m, reader := newMetrics(t)

	m.TermBegan("k", "a", 7, time.Second)
	m.StoreCall("k", "renew", "ok", 2*time.Millisecond)
	m.WatchRestarted("k")
	got := collect(t, reader)
	if v := gaugeValue(t, got["leadership.is_leader"]); v != 1 {
		t.Fatalf("is_leader %d", v)
	}
	if v := gaugeValue(t, got["leadership.term.token"]); v != 7 {
		t.Fatalf("token %d", v)
	}
	calls := got["leadership.store.call.duration"].Data.(metricdata.Histogram[float64])
	op, _ := calls.DataPoints[0].Attributes.Value(attribute.Key("op"))
	if len(calls.DataPoints) != 1 || calls.DataPoints[0].Count != 1 || op.AsString() != "renew" {
		t.Fatalf("store calls %#v", calls)
	}
	if got["leadership.acquire.duration"].Unit != "s" {
		t.Fatal("acquire.duration without its unit")
	}

	m.TermEnded("k", "a", 7, leadership.ErrResigned)
	got = collect(t, reader)
	if v := gaugeValue(t, got["leadership.is_leader"]); v != 0 {
		t.Fatalf("is_leader %d after the end", v)
	}
	transitions := got["leadership.transitions"].Data.(metricdata.Sum[int64])
	reasons := map[string]int64{}
	for _, dp := range transitions.DataPoints {
		r, _ := dp.Attributes.Value(attribute.Key("reason"))
		tr, _ := dp.Attributes.Value(attribute.Key("transition"))
		reasons[tr.AsString()+"/"+r.AsString()] = dp.Value
	}
	if reasons["began/"] != 1 || reasons["ended/resigned"] != 1 {
		t.Fatalf("transitions %v", reasons)
	}
}

func TestFollowerStaleness(t *testing.T) {
	m, reader := newMetrics(t)
	kv, err := memory.Open(context.Background(), memory.Config{Name: "otel-follower"})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	f := leadership.NewFollower(kv, "k")
	if _, _, err := f.FollowElection(); err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	untrack := m.TrackFollower("k", f)
	g := collect(t, reader)["leadership.follower.staleness"].Data.(metricdata.Gauge[float64])
	if len(g.DataPoints) != 1 || g.DataPoints[0].Value < 0 {
		t.Fatalf("staleness %#v", g)
	}
	untrack()
	if g, ok := collect(t, reader)["leadership.follower.staleness"]; ok && len(g.Data.(metricdata.Gauge[float64]).DataPoints) != 0 {
		t.Fatalf("staleness after untrack %#v", g)
	}
}

// A candidate with OpenTelemetry metrics, read here with the SDK's manual
// reader (in production: an OTLP or Prometheus exporter).
func Example() {
	ctx := context.Background()
	kv, err := memory.Open(ctx, memory.Config{Name: "example-otel"})
	if err != nil {
		panic(err)
	}
	defer kv.Close()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(ctx)
	metrics, err := leaderotel.New(provider)
	if err != nil {
		panic(err)
	}
	defer metrics.Close()

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
	fmt.Println("is_leader", gaugeValue(nil, collect(nil, reader)["leadership.is_leader"]))
	c.Stop()
	fmt.Println("is_leader", gaugeValue(nil, collect(nil, reader)["leadership.is_leader"]))
	// Output:
	// is_leader 1
	// is_leader 0
}
