package leadership

import (
	"context"
	"errors"
	"time"
)

// Metrics receives the engine's measurements, as client-go's
// MetricsProvider does: give one with WithMetrics. Adapters for Prometheus
// (package metrics/prometheus) and OpenTelemetry (package metrics/otel)
// implement it. The methods are called from the engine's goroutines and
// must return quickly; they never see a slow consumer's backlog, as the
// channels do.
type Metrics interface {
	// TermBegan: node leads the election at key from now, in the term
	// with token; waited is how long it campaigned for it (since it
	// started, or since its last term ended).
	TermBegan(key, node string, token uint64, waited time.Duration)
	// TermEnded: the term ended, for reason (reason.String() is a label).
	TermEnded(key, node string, token uint64, reason Reason)
	// StoreCall: one store call made for the election at key. op is
	// "get", "acquire", "renew", "release", "end" or "watch"; outcome is
	// "ok", "conflict" (a compare-and-swap that lost), "timeout" or
	// "error"; latency is how long the engine waited for it.
	StoreCall(key, op, outcome string, latency time.Duration)
	// WatchRestarted: the watch on key ended or failed and is opened again.
	WatchRestarted(key string)
}

// The outcomes of Metrics.StoreCall.
const (
	outcomeOK       = "ok"
	outcomeConflict = "conflict"
	outcomeTimeout  = "timeout"
	outcomeError    = "error"
)

// noMetrics is the default Metrics: it does nothing.
type noMetrics struct{}

func (noMetrics) TermBegan(string, string, uint64, time.Duration) {}
func (noMetrics) TermEnded(string, string, uint64, Reason)        {}
func (noMetrics) StoreCall(string, string, string, time.Duration) {}
func (noMetrics) WatchRestarted(string)                           {}

// WithMetrics sends the engine's measurements to m (see Metrics). By
// default nothing is measured. A nil m is refused (ErrInvalidOption).
func WithMetrics(m Metrics) Option {
	return notNil("WithMetrics", m, func(c *config) { c.metrics = m })
}

// outcomeOf classifies a store call's result for Metrics.StoreCall.
func outcomeOf(err error, conflict bool) string {
	switch {
	case err == nil && conflict:
		return outcomeConflict
	case err == nil:
		return outcomeOK
	case errors.Is(err, context.DeadlineExceeded):
		return outcomeTimeout
	}
	return outcomeError
}

// measured reports one store call of op, sent at sent on the observer's
// clock, to the configured metrics.
func (o *observer) measured(op string, sent time.Duration, err error, conflict bool) {
	o.cfg.metrics.StoreCall(o.key, op, outcomeOf(err, conflict), o.clock()-sent)
}
