package main

import (
	"bufio"
	"context"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestProcEventRoundTrip(t *testing.T) {
	for _, e := range []procEvent{
		{Kind: pkElected, Node: "c2", Token: 17, At: 81234567890123, Arg: "true"},
		{Kind: pkLeader, Node: "follower", At: 5, Arg: ""},
		{Kind: pkError, Node: "c1", At: 6, Arg: "a \"quoted\" error\nwith a newline"},
	} {
		line := e.String()
		if strings.Contains(line, "\n") {
			t.Fatalf("%q: a newline in the line", line)
		}
		got, err := parseProcEvent(line + "\n")
		if err != nil || got != e {
			t.Fatalf("%q: parsed %+v, %v; want %+v", line, got, err, e)
		}
	}
	// A node name that would break the fields becomes "-".
	if got, err := parseProcEvent(procEvent{Kind: pkReady, Node: "a b", Arg: "x"}.String()); err != nil || got.Node != "-" {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestParseProcEventRejects(t *testing.T) {
	for _, bad := range []string{
		"", "elected c1 1 2", "elected c1 x 2 \"true\"", "elected c1 1 y \"true\"",
		"elected c1 1 2 true", " c1 1 2 \"\"", "elected c1 -1 2 \"\"",
	} {
		if e, err := parseProcEvent(bad); err == nil {
			t.Errorf("%q parsed as %+v", bad, e)
		}
	}
}

func TestToEvent(t *testing.T) {
	e, ok := toEvent(3, procEvent{Kind: pkElected, Node: "c4", Token: 9, At: 2_000_000, Arg: "true"})
	if !ok || e.kind != evElected || !e.val || e.who != 3 || e.token != 9 || e.at.Sub(monoTime(1_000_000)) != time.Millisecond {
		t.Fatalf("%+v %v", e, ok)
	}
	if _, ok := toEvent(0, procEvent{Kind: "unknown"}); ok {
		t.Fatal("an unknown kind converted")
	}
}

func TestSummarizeSmallSamples(t *testing.T) {
	s := summarize([]float64{3, 1, 2})
	if s.P50 != 2 || s.P99 != 3 || s.Min != 1 || s.Median != 2 {
		t.Fatalf("%+v", s)
	}
	s = summarize([]float64{-0.5})
	if s.P50 != -0.5 || s.P99 != -0.5 {
		t.Fatalf("%+v", s)
	}
}

// cutHandoff on a synthetic trace: leader 0 releases, follower-less, 1
// wins after a watch push and one extra read.
func TestCutHandoff(t *testing.T) {
	at := func(ms float64) time.Time { return monoTime(int64(ms * 1e6)) }
	call := func(who int, ms float64, name string) event {
		return event{at: at(ms), kind: evCall, who: who, name: name}
	}
	rel := event{at: at(10), kind: evRelease, who: 0}
	el := event{at: at(19), kind: evElected, who: 1, val: true}
	evs := []event{
		call(1, 9, "Get>"), call(1, 9.5, "Get<"), // before the release: ignored
		rel,
		call(0, 10.1, "AtomicPut>"),
		{at: at(11.5), kind: evWatch, who: 1}, // the push, before the release returned
		call(0, 12, "AtomicPut<"),
		call(1, 13, "Get>"), call(1, 14, "Get<"),
		call(1, 15, "AtomicPut>"), call(1, 18, "AtomicPut<"),
		{at: at(18.5), kind: evStopped, who: 0},
		el,
	}
	p := cutHandoff(evs, 0, 1, rel, el)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(p.release, 2) || !near(p.push, -0.5) || !near(p.react, 3.5) || !near(p.acquire, 3) || !near(p.deliver, 1) || p.between != 1 {
		t.Fatalf("%+v", p)
	}
	if p.leaderCalls != "AtomicPut" || p.succCalls != "watch,Get,AtomicPut" {
		t.Fatalf("calls %q / %q", p.leaderCalls, p.succCalls)
	}
	var r phaseResult
	r.add(p)
	r.add(cutHandoff(nil, 0, 1, rel, el)) // nothing traced: nothing added but the call lists
	if len(r.Release) != 1 || len(r.Push) != 1 || len(r.Between) != 1 || len(r.Leader) != 2 {
		t.Fatalf("%+v", r)
	}
	if c, n := mostCommon([]string{"b", "a", "b"}); c != "b" || n != 2 {
		t.Fatalf("%q %d", c, n)
	}
}

// childOverPipe runs a child role in this process, its commands and events
// over in-memory pipes.
type childOverPipe struct {
	cmds   *io.PipeWriter
	events *bufio.Scanner
	done   chan error
}

func startChildOverPipe(t *testing.T, spec childSpec) *childOverPipe {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &childOverPipe{cmds: inW, events: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() {
		err := runChild(context.Background(), spec, inR, outW)
		_ = outW.Close()
		c.done <- err
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		<-c.done
		_ = outR.Close()
	})
	return c
}

// next returns the child's next event of kind, skipping the others.
func (c *childOverPipe) next(t *testing.T, kind string) procEvent {
	t.Helper()
	for c.events.Scan() {
		e, err := parseProcEvent(c.events.Text())
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == kind {
			return e
		}
	}
	t.Fatalf("no %s event before the child's output ended", kind)
	return procEvent{}
}

// The child protocol, on the embedded store: a candidate child is elected,
// a follower child names it, stop releases and ends the candidate, and the
// follower then names nobody.
func TestChildProtocolOverPipe(t *testing.T) {
	base := childSpec{URL: "memory://bench-proc-test", Key: "bench/proc-test", TTL: 2 * time.Second}
	cs := base
	cs.Role, cs.Node = roleCandidate, "c1"
	cand := startChildOverPipe(t, cs)
	ready := cand.next(t, pkReady)
	el := cand.next(t, pkElected)
	for el.Arg == "false" { // the channel starts with false
		el = cand.next(t, pkElected)
	}
	if el.Arg != "true" || el.Token == 0 || el.Node != "c1" || el.At < ready.At {
		t.Fatalf("elected %+v after ready %+v", el, ready)
	}

	fs := base
	fs.Role, fs.Node = roleFollower, "f"
	fol := startChildOverPipe(t, fs)
	if e := fol.next(t, pkLeader); e.Arg != "c1" {
		t.Fatalf("follower named %q", e.Arg)
	}

	if _, err := io.WriteString(cand.cmds, cmdStop+"\n"); err != nil {
		t.Fatal(err)
	}
	rel := cand.next(t, pkRelease)
	st := cand.next(t, pkStopped)
	if st.At < rel.At {
		t.Fatalf("stopped %d before release %d", st.At, rel.At)
	}
	for {
		if e := fol.next(t, pkLeader); e.Arg == "" {
			break
		}
	}
	_ = cand.cmds.Close()
	for cand.events.Scan() {
	}
	if err := <-cand.done; err != nil {
		t.Fatal(err)
	}
	cand.done <- nil // for the cleanup
}

func TestChildUnknownRole(t *testing.T) {
	c := startChildOverPipe(t, childSpec{Role: "nobody", Node: "x"})
	if e := c.next(t, pkError); !strings.Contains(e.Arg, "unknown role") {
		t.Fatalf("%+v", e)
	}
	err := <-c.done
	c.done <- err
	if err == nil {
		t.Fatal("no error")
	}
}

func TestProcessesFlag(t *testing.T) {
	captureOutput(t)
	cfg, err := parseFlags([]string{"--processes", "--backends", "memory"})
	if err != nil || !cfg.processes {
		t.Fatalf("%+v %v", cfg, err)
	}
}

// Rounds split into passes add up to the rounds, the first passes taking
// the remainder; a row measured in two passes holds both passes' samples.
func TestPassesShareAndMerge(t *testing.T) {
	for _, c := range []struct{ n, passes int }{{100, 1}, {100, 4}, {10, 4}, {3, 3}, {0, 5}} {
		sum, prev := 0, c.n
		for pass := range c.passes {
			share := shareOf(c.n, c.passes, pass)
			if share > prev {
				t.Errorf("%d over %d: pass %d takes %d, more than the pass before", c.n, c.passes, pass, share)
			}
			sum, prev = sum+share, share
		}
		if sum != c.n {
			t.Errorf("%d over %d passes: shares add up to %d", c.n, c.passes, sum)
		}
	}
	rows := newRowSet(&report{})
	rows.add(&backendResult{Name: "etcd", Handoff: &handoffResult{Handoff: []float64{1, 2}, Failed: 1}})
	rows.add(&backendResult{Name: "redis", Crash: &crashResult{Takeover: []float64{1500}}})
	rows.add(&backendResult{Name: "etcd", Handoff: &handoffResult{Handoff: []float64{3}}, Crash: &crashResult{Takeover: []float64{1700}}, Errors: []string{"x"}})
	rows.skip("zk", "skip zk")
	rows.skip("zk", "skip zk again")
	rep := rows.rep
	if len(rep.Backends) != 2 || rep.Backends[0].Name != "etcd" || rep.Backends[1].Name != "redis" {
		t.Fatalf("rows %+v, want etcd then redis", rep.Backends)
	}
	etcd := rep.Backends[0]
	if len(etcd.Handoff.Handoff) != 3 || etcd.Handoff.Failed != 1 || etcd.Crash == nil || len(etcd.Crash.Takeover) != 1 || len(etcd.Errors) != 1 {
		t.Fatalf("merged etcd row %+v", etcd)
	}
	if len(rep.Skipped) != 1 {
		t.Fatalf("skipped %q, want one line", rep.Skipped)
	}
	el := &backendResult{Name: "election", Election: &electionResult{Takeover: []float64{2000}, Failed: 1}, Phases: &phaseResult{Release: []float64{2}, Leader: []string{"a"}}}
	el.merge(&backendResult{Name: "election", Election: &electionResult{Takeover: []float64{2100}, CrashFailed: 1}, Phases: &phaseResult{Release: []float64{3}, Leader: []string{"b"}}})
	if e, p := el.Election, el.Phases; len(e.Takeover) != 2 || e.Failed != 1 || e.CrashFailed != 1 || len(p.Release) != 2 || len(p.Leader) != 2 {
		t.Fatalf("merged election row %+v, phases %+v", e, p)
	}
}
