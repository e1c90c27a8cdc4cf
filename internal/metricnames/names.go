// Package metricnames is what the metrics adapters (metrics/prometheus,
// metrics/otel) share: the names and help of each measurement, its
// buckets, and the label of a term's end reason.
package metricnames

import (
	"github.com/leadership-go/leadership"
)

// Names and help texts, without a unit suffix where the adapter adds one.
const (
	IsLeader          = "leadership_is_leader"
	IsLeaderHelp      = "1 while this candidate leads the election at key, else 0."
	Token             = "leadership_term_token"
	TokenHelp         = "The fencing token of the candidate's current or last term."
	Transitions       = "leadership_transitions_total"
	TransitionsHelp   = "Terms begun and ended, by transition (began, ended) and the reason a term ended."
	Acquire           = "leadership_acquire_seconds"
	AcquireHelp       = "How long a candidate campaigned before it led a term."
	StoreCalls        = "leadership_store_call_seconds"
	StoreCallsHelp    = "Store calls by operation and outcome, with their latency."
	WatchRestarts     = "leadership_watch_restarts_total"
	WatchRestartsHelp = "Watches on the election key opened again after they ended or failed."
	Staleness         = "leadership_follower_staleness_seconds"
	StalenessHelp     = "How long ago a follower last confirmed the state of the election with a read."
)

// The values of the transition label.
const (
	Began = "began"
	Ended = "ended"
)

// Buckets of the latency histograms, in seconds: store calls take
// milliseconds, acquisitions up to a few TTLs.
var (
	StoreCallBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	AcquireBuckets   = []float64{.01, .05, .1, .5, 1, 2.5, 5, 10, 30, 60, 300}
)

// Reason is the label of why a term ended: the Reason's own name.
func Reason(r leadership.Reason) string { return r.String() }
