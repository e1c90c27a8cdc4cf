package main

// A cross-process run split into passes (--passes) measures every row a
// little at a time, so that a machine whose load drifts during the run
// weighs on every row alike: the ratio of a row to etcd's Election is then
// taken between samples spread over the same minutes. A row's samples from
// every pass are merged into one row; its figures are computed from them
// at the end, as for a single pass.

// shareOf is pass's share of n rounds split over passes: the first n %
// passes passes take one more.
func shareOf(n, passes, pass int) int {
	passes = max(passes, 1)
	share := n / passes
	if pass < n%passes {
		share++
	}
	return share
}

// rowSet collects a run's rows in their first order, one per name.
type rowSet struct {
	rep     *report
	byName  map[string]*backendResult
	skipped map[string]bool
}

func newRowSet(rep *report) *rowSet {
	return &rowSet{rep: rep, byName: map[string]*backendResult{}, skipped: map[string]bool{}}
}

// add appends r as a new row, or merges it into the row of its name.
func (s *rowSet) add(r *backendResult) {
	if old, ok := s.byName[r.Name]; ok {
		old.merge(r)
		return
	}
	s.byName[r.Name] = r
	s.rep.Backends = append(s.rep.Backends, r)
}

// skip reports, once per row, that the row named name is left out.
func (s *rowSet) skip(name, line string) {
	if s.skipped[name] {
		return
	}
	s.skipped[name] = true
	progress("%s", line)
	s.rep.Skipped = append(s.rep.Skipped, line)
}

// merge adds o's samples, counts and errors to r.
func (r *backendResult) merge(o *backendResult) {
	r.Handoff = mergeResult(r.Handoff, o.Handoff, (*handoffResult).merge)
	r.Crash = mergeResult(r.Crash, o.Crash, (*crashResult).merge)
	r.Election = mergeResult(r.Election, o.Election, (*electionResult).merge)
	r.Phases = mergeResult(r.Phases, o.Phases, (*phaseResult).merge)
	r.Errors = append(r.Errors, o.Errors...)
}

// mergeResult is a merged with b, either of which may be nil.
func mergeResult[T any](a, b *T, merge func(a, b *T)) *T {
	switch {
	case a == nil:
		return b
	case b != nil:
		merge(a, b)
	}
	return a
}

// appendSamples appends each series of from to the series of to at the
// same place.
func appendSamples[T any](to, from []*[]T) {
	for i, p := range to {
		*p = append(*p, *from[i]...)
	}
}

func (h *handoffResult) series() []*[]float64 {
	return []*[]float64{&h.Handoff, &h.FollowerAfter, &h.ResignToFollower}
}

func (h *handoffResult) merge(o *handoffResult) {
	appendSamples(h.series(), o.series())
	h.Failed += o.Failed
	h.Unasked += o.Unasked
	h.StoreErrors += o.StoreErrors
}

func (c *crashResult) series() []*[]float64 { return []*[]float64{&c.Takeover, &c.StepDown, &c.Margin} }

func (c *crashResult) merge(o *crashResult) {
	appendSamples(c.series(), o.series())
	c.Failed += o.Failed
	c.StoreErrors += o.StoreErrors
}

func (e *electionResult) series() []*[]float64 {
	return []*[]float64{&e.Handoff, &e.FollowerAfter, &e.ResignToFollower, &e.Takeover}
}

func (e *electionResult) merge(o *electionResult) {
	appendSamples(e.series(), o.series())
	e.Failed += o.Failed
	e.CrashFailed += o.CrashFailed
}

func (p *phaseResult) series() []*[]float64 {
	return []*[]float64{&p.Release, &p.Prepare, &p.Push, &p.React, &p.Acquire, &p.Deliver, &p.Between}
}

func (p *phaseResult) merge(o *phaseResult) {
	appendSamples(p.series(), o.series())
	appendSamples([]*[]string{&p.Leader, &p.Acquirer}, []*[]string{&o.Leader, &o.Acquirer})
}
