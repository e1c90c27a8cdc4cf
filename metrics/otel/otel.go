// Package otel records leadership's measurements (leadership.Metrics) with
// OpenTelemetry metric instruments, on any go.opentelemetry.io/otel/metric
// MeterProvider:
//
//	leadership.is_leader           Int64Gauge        1 while leading {key, node}
//	leadership.term.token          Int64Gauge        the current or last fencing token {key, node}
//	leadership.transitions         Int64Counter      terms began and ended {key, node, transition, reason}
//	leadership.acquire.duration    Float64Histogram  s, campaigning time before a term {key, node}
//	leadership.store.call.duration Float64Histogram  s, store calls {key, op, outcome}
//	leadership.watch.restarts      Int64Counter      watches opened again {key}
//	leadership.follower.staleness  Float64ObservableGauge s, age of a tracked follower's confirmed state {key}
//
// Give the Metrics to candidates and followers with leadership.WithMetrics,
// and followers to TrackFollower for their staleness.
package otel

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/metricnames"
)

// ScopeName is the instrumentation scope of the meter New uses.
const ScopeName = "github.com/leadership-go/leadership"

// Metrics implements leadership.Metrics with OpenTelemetry instruments.
type Metrics struct {
	isLeader      metric.Int64Gauge
	token         metric.Int64Gauge
	transitions   metric.Int64Counter
	acquire       metric.Float64Histogram
	storeCalls    metric.Float64Histogram
	watchRestarts metric.Int64Counter
	registration  metric.Registration

	mu        sync.Mutex
	followers map[*leadership.Follower]string // tracked follower -> key
}

var _ leadership.Metrics = (*Metrics)(nil)

// New creates the instruments on provider's meter for ScopeName. Close
// unregisters the staleness callback.
func New(provider metric.MeterProvider) (*Metrics, error) {
	meter := provider.Meter(ScopeName)
	m := &Metrics{followers: map[*leadership.Follower]string{}}
	var errs [8]error
	m.isLeader, errs[0] = meter.Int64Gauge("leadership.is_leader", metric.WithDescription(metricnames.IsLeaderHelp))
	m.token, errs[1] = meter.Int64Gauge("leadership.term.token", metric.WithDescription(metricnames.TokenHelp))
	m.transitions, errs[2] = meter.Int64Counter("leadership.transitions", metric.WithDescription(metricnames.TransitionsHelp))
	m.acquire, errs[3] = meter.Float64Histogram("leadership.acquire.duration", metric.WithUnit("s"),
		metric.WithDescription(metricnames.AcquireHelp), metric.WithExplicitBucketBoundaries(metricnames.AcquireBuckets...))
	m.storeCalls, errs[4] = meter.Float64Histogram("leadership.store.call.duration", metric.WithUnit("s"),
		metric.WithDescription(metricnames.StoreCallsHelp), metric.WithExplicitBucketBoundaries(metricnames.StoreCallBuckets...))
	m.watchRestarts, errs[5] = meter.Int64Counter("leadership.watch.restarts", metric.WithDescription(metricnames.WatchRestartsHelp))
	staleness, err := meter.Float64ObservableGauge("leadership.follower.staleness", metric.WithUnit("s"),
		metric.WithDescription(metricnames.StalenessHelp))
	errs[6] = err
	if err == nil {
		m.registration, errs[7] = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			for f, key := range m.followers {
				o.ObserveFloat64(staleness, f.Staleness().Seconds(), metric.WithAttributes(attribute.String("key", key)))
			}
			return nil
		}, staleness)
	}
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return m, nil
}

// Close unregisters the staleness callback.
func (m *Metrics) Close() error { return m.registration.Unregister() }

func candidateAttrs(key, node string) metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("key", key), attribute.String("node", node))
}

// TermBegan records is_leader 1, the token, the transition and the time
// it took.
func (m *Metrics) TermBegan(key, node string, token uint64, waited time.Duration) {
	ctx, attrs := context.Background(), candidateAttrs(key, node)
	m.isLeader.Record(ctx, 1, attrs)
	m.token.Record(ctx, int64(token), attrs)
	m.transitions.Add(ctx, 1, metric.WithAttributes(attribute.String("key", key), attribute.String("node", node),
		attribute.String("transition", metricnames.Began), attribute.String("reason", "")))
	m.acquire.Record(ctx, waited.Seconds(), attrs)
}

// TermEnded records is_leader 0 and the transition with its reason.
func (m *Metrics) TermEnded(key, node string, _ uint64, reason leadership.Reason) {
	ctx := context.Background()
	m.isLeader.Record(ctx, 0, candidateAttrs(key, node))
	m.transitions.Add(ctx, 1, metric.WithAttributes(attribute.String("key", key), attribute.String("node", node),
		attribute.String("transition", metricnames.Ended), attribute.String("reason", metricnames.Reason(reason))))
}

// StoreCall records the call's latency under its operation and outcome.
func (m *Metrics) StoreCall(key, op, outcome string, latency time.Duration) {
	m.storeCalls.Record(context.Background(), latency.Seconds(), metric.WithAttributes(
		attribute.String("key", key), attribute.String("op", op), attribute.String("outcome", outcome)))
}

// WatchRestarted counts the restart.
func (m *Metrics) WatchRestarted(key string) {
	m.watchRestarts.Add(context.Background(), 1, metric.WithAttributes(attribute.String("key", key)))
}

// TrackFollower observes f's staleness (leadership.Follower.Staleness) as
// leadership.follower.staleness{key} at each collection, until the
// returned func is called.
func (m *Metrics) TrackFollower(key string, f *leadership.Follower) (untrack func()) {
	m.mu.Lock()
	m.followers[f] = key
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.followers, f)
		m.mu.Unlock()
	}
}
