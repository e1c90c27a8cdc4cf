package main

import "github.com/leadership-go/leadership"

// newMetrics returns no metrics: this consumer imports no bridge.
func newMetrics() (leadership.Metrics, func() (string, error), error) { return nil, nil, nil }
