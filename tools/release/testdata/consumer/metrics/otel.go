package main

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/metrics/otel"
)

// newMetrics returns the OpenTelemetry bridge's metrics on an SDK meter
// provider with a manual reader, and a function that finds
// leadership.is_leader at 1 there.
func newMetrics() (leadership.Metrics, func() (string, error), error) {
	reader := sdkmetric.NewManualReader()
	m, err := otel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		return nil, nil, err
	}
	return m, func() (string, error) {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			return "", err
		}
		n := 0
		for _, sm := range rm.ScopeMetrics {
			for _, x := range sm.Metrics {
				n++
				if g, ok := x.Data.(metricdata.Gauge[int64]); ok && x.Name == "leadership.is_leader" {
					for _, p := range g.DataPoints {
						if p.Value == 1 {
							return fmt.Sprintf("leadership.is_leader 1, of %d instruments recorded", len(sm.Metrics)), nil
						}
					}
				}
			}
		}
		return "", fmt.Errorf("no leadership.is_leader at 1 among %d instruments", n)
	}, nil
}
