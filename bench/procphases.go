package main

import (
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// phaseResult cuts the cross-process handoffs of one backend into their
// phases, from the children's traces of their store calls (milliseconds).
type phaseResult struct {
	Release  []float64 `json:"release_ms"`    // Stop called -> the leader's releasing write returned
	Prepare  []float64 `json:"prepare_ms"`    // Stop called -> the leader's releasing write began
	Push     []float64 `json:"push_ms"`       // release returned -> the successor's watch delivered an event
	React    []float64 `json:"react_ms"`      // that watch event -> the successor's acquiring write began
	Acquire  []float64 `json:"acquire_ms"`    // the acquiring write, start to return
	Deliver  []float64 `json:"deliver_ms"`    // the write returned -> the elected channel delivered true
	Between  []float64 `json:"calls_between"` // the successor's calls between the watch event and the acquiring write
	Leader   []string  `json:"leader_calls"`  // the leader's calls between Stop and its return, per round
	Acquirer []string  `json:"successor_calls"`
}

// handoffPhase is one round's cut; a phase that could not be found is NaN.
// Push can be negative: the successor's watch may deliver the release
// before the leader's write has returned to it.
type handoffPhase struct {
	release, prepare, push, react, acquire, deliver float64
	between                                         int
	leaderCalls, succCalls                          string
}

func isWrite(method string) bool {
	switch method {
	case "AtomicPut", "AtomicDelete", "Put", "Delete":
		return true
	}
	return false
}

// callOf splits a call event's name "Method>" or "Method<".
func callOf(e event) (method string, start bool) {
	if e.kind != evCall || len(e.name) < 2 {
		return "", false
	}
	return e.name[:len(e.name)-1], strings.HasSuffix(e.name, ">")
}

// cutHandoff computes the phases of one handoff from the events since the
// round's mark: the leader lead released at rel, the successor succ was
// elected at el.
func cutHandoff(evs []event, lead, succ int, rel, el event) handoffPhase {
	nan := math.NaN()
	p := handoffPhase{release: nan, prepare: nan, push: nan, react: nan, acquire: nan, deliver: nan}
	ms := func(a, b time.Time) float64 { return msf(b.Sub(a)) }
	// The leader's calls from Stop until it stopped; the release is its
	// first write's return.
	var relStart, relDone time.Time
	var lcalls []string
	for _, e := range evs {
		if e.who != lead || e.at.Before(rel.at) {
			continue
		}
		if e.kind == evStopped {
			break
		}
		if m, start := callOf(e); m != "" {
			if start {
				lcalls = append(lcalls, m)
				if isWrite(m) && relStart.IsZero() {
					relStart = e.at
				}
			} else if isWrite(m) && relDone.IsZero() {
				relDone = e.at
			}
		}
	}
	p.leaderCalls = strings.Join(lcalls, ",")
	if relDone.IsZero() {
		return p
	}
	p.release = ms(rel.at, relDone)
	if !relStart.IsZero() {
		p.prepare = ms(rel.at, relStart)
	}
	// The successor: its calls from the release until elected, the first
	// watch event after the release, the first write after that event.
	var push, wStart, wEnd time.Time
	var scalls []string
	for _, e := range evs {
		if e.who != succ || e.at.Before(rel.at) || e.at.After(el.at) {
			continue
		}
		if e.kind == evWatch && push.IsZero() {
			push = e.at
			scalls = append(scalls, "watch")
			continue
		}
		m, start := callOf(e)
		if m == "" {
			continue
		}
		if start {
			scalls = append(scalls, m)
		}
		switch {
		case push.IsZero():
		case start && isWrite(m) && wStart.IsZero():
			wStart = e.at
		case start && wStart.IsZero():
			p.between++
		case !start && isWrite(m) && !wStart.IsZero() && wEnd.IsZero():
			wEnd = e.at
		}
	}
	p.succCalls = strings.Join(scalls, ",")
	if push.IsZero() {
		return p
	}
	p.push = ms(relDone, push)
	if wStart.IsZero() {
		return p
	}
	p.react = ms(push, wStart)
	if wEnd.IsZero() {
		return p
	}
	p.acquire = ms(wStart, wEnd)
	p.deliver = ms(wEnd, el.at)
	return p
}

// add appends a round's phases; missing ones are left out.
func (r *phaseResult) add(p handoffPhase) {
	for _, x := range []struct {
		v  float64
		to *[]float64
	}{{p.release, &r.Release}, {p.prepare, &r.Prepare}, {p.push, &r.Push}, {p.react, &r.React}, {p.acquire, &r.Acquire}, {p.deliver, &r.Deliver}} {
		if !math.IsNaN(x.v) {
			*x.to = append(*x.to, x.v)
		}
	}
	if !math.IsNaN(p.push) {
		r.Between = append(r.Between, float64(p.between))
	}
	r.Leader = append(r.Leader, p.leaderCalls)
	r.Acquirer = append(r.Acquirer, p.succCalls)
}

// mostCommon returns the most frequent string and how often it occurs.
func mostCommon(xs []string) (string, int) {
	n := map[string]int{}
	for _, x := range xs {
		n[x]++
	}
	best, count := "", 0
	for _, k := range slices.Sorted(maps.Keys(n)) {
		if n[k] > count {
			best, count = k, n[k]
		}
	}
	return best, count
}
