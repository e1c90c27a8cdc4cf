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

func (h *handoffResult) merge(o *handoffResult) {
	h.Handoff = append(h.Handoff, o.Handoff...)
	h.FollowerAfter = append(h.FollowerAfter, o.FollowerAfter...)
	h.ResignToFollower = append(h.ResignToFollower, o.ResignToFollower...)
	h.Failed += o.Failed
	h.Unasked += o.Unasked
	h.StoreErrors += o.StoreErrors
}

func (c *crashResult) merge(o *crashResult) {
	c.Takeover = append(c.Takeover, o.Takeover...)
	c.StepDown = append(c.StepDown, o.StepDown...)
	c.Margin = append(c.Margin, o.Margin...)
	c.Failed += o.Failed
	c.StoreErrors += o.StoreErrors
}

func (e *electionResult) merge(o *electionResult) {
	e.Handoff = append(e.Handoff, o.Handoff...)
	e.FollowerAfter = append(e.FollowerAfter, o.FollowerAfter...)
	e.ResignToFollower = append(e.ResignToFollower, o.ResignToFollower...)
	e.Takeover = append(e.Takeover, o.Takeover...)
	e.Failed += o.Failed
	e.CrashFailed += o.CrashFailed
}

func (p *phaseResult) merge(o *phaseResult) {
	p.Release = append(p.Release, o.Release...)
	p.Prepare = append(p.Prepare, o.Prepare...)
	p.Push = append(p.Push, o.Push...)
	p.React = append(p.React, o.React...)
	p.Acquire = append(p.Acquire, o.Acquire...)
	p.Deliver = append(p.Deliver, o.Deliver...)
	p.Between = append(p.Between, o.Between...)
	p.Leader = append(p.Leader, o.Leader...)
	p.Acquirer = append(p.Acquirer, o.Acquirer...)
}
