package main

import (
	"fmt"
	"io"
)

// printPhases prints where the cross-process handoffs spent their time:
// the median of each phase, from the children's traces of their store
// calls, and the most common sequence of calls.
func printPhases(w io.Writer, rep *report) {
	p := func(format string, a ...any) { _, _ = fmt.Fprintf(w, format, a...) }
	p("\nHandoff phases (median ms / p99 ms, from the children's store-call traces): release = Stop (etcd: Resign) called -> the leader's releasing write returned (in parentheses: -> that write began); push = that write returned -> the successor's watch delivered (negative: the push came first); react = the push -> the successor's acquiring write began (calls in between: median count); acquire = that write; deliver = its return -> elected channel (etcd: Resign returned -> Campaign returned).\n\n")
	p("| backend | release | push | react (calls between) | acquire | deliver | leader's calls in Stop (most common, rounds) | successor's calls (most common, rounds) |\n")
	p("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Backends {
		ph := r.Phases
		if ph == nil {
			continue
		}
		cell := func(xs []float64) string {
			s := summarize(xs)
			if s == nil {
				return "-"
			}
			return fmtMS(s.Median) + " / " + fmtMS(s.P99)
		}
		between := "-"
		if s := summarize(ph.Between); s != nil {
			between = fmt.Sprintf("%.0f", s.Median)
		}
		calls := func(xs []string) string {
			c, n := mostCommon(xs)
			if n == 0 {
				return "-"
			}
			return fmt.Sprintf("%s (%d/%d)", c, n, len(xs))
		}
		p("| %s | %s | %s | %s (%s) | %s | %s | %s | %s |\n", r.Name, cell(ph.Release)+prepared(ph.Prepare), cell(ph.Push), cell(ph.React), between,
			cell(ph.Acquire), cell(ph.Deliver), calls(ph.Leader), calls(ph.Acquirer))
	}
}

// prepared is the median time from Stop to the releasing write's start,
// in parentheses, or nothing when no round had one.
func prepared(xs []float64) string {
	s := summarize(xs)
	if s == nil {
		return ""
	}
	return " (" + fmtMS(s.Median) + ")"
}
