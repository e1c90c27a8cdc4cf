// Package prometheus exports leadership's measurements (leadership.Metrics)
// as Prometheus metrics, with github.com/prometheus/client_golang:
//
//	leadership_is_leader{key,node}                       gauge, 1 while leading
//	leadership_term_token{key,node}                      gauge, the current or last fencing token
//	leadership_transitions_total{key,node,transition,reason} counter, terms began and ended (and why)
//	leadership_acquire_seconds{key,node}                 histogram, campaigning time before a term
//	leadership_store_call_seconds{key,op,outcome}        histogram, store calls with their latency
//	leadership_watch_restarts_total{key}                 counter, watches opened again
//	leadership_follower_staleness_seconds{key}           gauge, age of a tracked follower's confirmed state
//
// Give the Metrics to candidates and followers with leadership.WithMetrics,
// and followers to TrackFollower for their staleness.
package prometheus

import (
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/metricnames"
)

// Metrics implements leadership.Metrics with Prometheus collectors.
type Metrics struct {
	isLeader      *prom.GaugeVec
	token         *prom.GaugeVec
	transitions   *prom.CounterVec
	acquire       *prom.HistogramVec
	storeCalls    *prom.HistogramVec
	watchRestarts *prom.CounterVec
	followers     *followerCollector
}

var _ leadership.Metrics = (*Metrics)(nil)

// New makes the collectors and registers them on reg
// (prometheus.DefaultRegisterer when nil). It fails as reg.Register does,
// for instance when they are registered there already.
func New(reg prom.Registerer) (*Metrics, error) {
	if reg == nil {
		reg = prom.DefaultRegisterer
	}
	m := &Metrics{
		isLeader: prom.NewGaugeVec(prom.GaugeOpts{Name: metricnames.IsLeader, Help: metricnames.IsLeaderHelp}, []string{"key", "node"}),
		token:    prom.NewGaugeVec(prom.GaugeOpts{Name: metricnames.Token, Help: metricnames.TokenHelp}, []string{"key", "node"}),
		transitions: prom.NewCounterVec(prom.CounterOpts{Name: metricnames.Transitions, Help: metricnames.TransitionsHelp},
			[]string{"key", "node", "transition", "reason"}),
		acquire: prom.NewHistogramVec(prom.HistogramOpts{Name: metricnames.Acquire, Help: metricnames.AcquireHelp,
			Buckets: metricnames.AcquireBuckets}, []string{"key", "node"}),
		storeCalls: prom.NewHistogramVec(prom.HistogramOpts{Name: metricnames.StoreCalls, Help: metricnames.StoreCallsHelp,
			Buckets: metricnames.StoreCallBuckets}, []string{"key", "op", "outcome"}),
		watchRestarts: prom.NewCounterVec(prom.CounterOpts{Name: metricnames.WatchRestarts, Help: metricnames.WatchRestartsHelp}, []string{"key"}),
		followers: &followerCollector{
			desc:    prom.NewDesc(metricnames.Staleness, metricnames.StalenessHelp, []string{"key"}, nil),
			tracked: map[*leadership.Follower]string{},
		},
	}
	for _, c := range []prom.Collector{m.isLeader, m.token, m.transitions, m.acquire, m.storeCalls, m.watchRestarts, m.followers} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// TermBegan sets is_leader to 1 and the token, counts the transition and
// observes the time it took.
func (m *Metrics) TermBegan(key, node string, token uint64, waited time.Duration) {
	m.isLeader.WithLabelValues(key, node).Set(1)
	m.token.WithLabelValues(key, node).Set(float64(token))
	m.transitions.WithLabelValues(key, node, metricnames.Began, "").Inc()
	m.acquire.WithLabelValues(key, node).Observe(waited.Seconds())
}

// TermEnded sets is_leader to 0 and counts the transition with its reason.
func (m *Metrics) TermEnded(key, node string, _ uint64, reason leadership.Reason) {
	m.isLeader.WithLabelValues(key, node).Set(0)
	m.transitions.WithLabelValues(key, node, metricnames.Ended, metricnames.Reason(reason)).Inc()
}

// StoreCall observes the call's latency under its operation and outcome.
func (m *Metrics) StoreCall(key, op, outcome string, latency time.Duration) {
	m.storeCalls.WithLabelValues(key, op, outcome).Observe(latency.Seconds())
}

// WatchRestarted counts the restart.
func (m *Metrics) WatchRestarted(key string) { m.watchRestarts.WithLabelValues(key).Inc() }

// TrackFollower exports f's staleness (leadership.Follower.Staleness) as
// leadership_follower_staleness_seconds{key}, read at each scrape, until
// the returned func is called.
func (m *Metrics) TrackFollower(key string, f *leadership.Follower) (untrack func()) {
	m.followers.mu.Lock()
	m.followers.tracked[f] = key
	m.followers.mu.Unlock()
	return func() {
		m.followers.mu.Lock()
		delete(m.followers.tracked, f)
		m.followers.mu.Unlock()
	}
}

// followerCollector reads the staleness of the tracked followers when
// scraped.
type followerCollector struct {
	desc    *prom.Desc
	mu      sync.Mutex
	tracked map[*leadership.Follower]string // follower -> key
}

func (c *followerCollector) Describe(ch chan<- *prom.Desc) { ch <- c.desc }

func (c *followerCollector) Collect(ch chan<- prom.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for f, key := range c.tracked {
		ch <- prom.MustNewConstMetric(c.desc, prom.GaugeValue, f.Staleness().Seconds(), key)
	}
}
