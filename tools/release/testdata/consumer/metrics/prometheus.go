package main

import (
	"fmt"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/metrics/prometheus"
)

// newMetrics returns the Prometheus bridge's metrics on a registry of
// their own, and a function that finds leadership_is_leader at 1 there.
func newMetrics() (leadership.Metrics, func() (string, error), error) {
	reg := prom.NewRegistry()
	m, err := prometheus.New(reg)
	if err != nil {
		return nil, nil, err
	}
	return m, func() (string, error) {
		families, err := reg.Gather()
		if err != nil {
			return "", err
		}
		for _, f := range families {
			if f.GetName() != "leadership_is_leader" {
				continue
			}
			for _, x := range f.GetMetric() {
				if x.GetGauge().GetValue() == 1 {
					return fmt.Sprintf("leadership_is_leader 1, of %d metric families", len(families)), nil
				}
			}
		}
		return "", fmt.Errorf("no leadership_is_leader at 1 among %d metric families", len(families))
	}, nil
}
