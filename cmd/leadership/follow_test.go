package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestFollowJSON checks follow --json: one object per change with the
// time, the leader ("" for none) and the term, and exit 0 on a signal.
func TestFollowJSON(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	f := startInProcess(t.Context(), t, "follow", "--store", storeURL, "--key", "k", "--json")
	waitLines := func(n int) []string {
		t.Helper()
		if !waitFor(10*time.Second, func() bool { return len(f.stdout.lines()) >= n }) {
			t.Fatalf("fewer than %d lines: %q; stderr %q", n, f.stdout.String(), f.stderr.String())
		}
		return f.stdout.lines()
	}
	waitLines(1)
	a := startCandidate(t, storeName, "k", "node-a", time.Minute)
	waitLines(2)
	a.c.Stop() // releases at once
	waitLines(3)
	b := startCandidate(t, storeName, "k", "node-b", 400*time.Millisecond) // holdoff 100ms
	waitLines(4)
	b.c.Resign() // no one else: b takes it back after its holdoff, in a new term
	lines := waitLines(6)
	if code := f.stop(t); code != exitOK {
		t.Fatalf("exit %d; stderr %q", code, f.stderr.String())
	}
	if f.stderr.String() != "" {
		t.Errorf("stderr %q", f.stderr.String())
	}
	want := []struct {
		leader string
		term   uint64
	}{{"", 0}, {"node-a", 1}, {"", 1}, {"node-b", 2}, {"", 2}, {"node-b", 3}}
	var last time.Time
	for i, l := range lines[:len(want)] {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
		if len(obj) != 3 {
			t.Errorf("line %d %q: want exactly time, leader and term", i, l)
		}
		var o observationJSON
		_ = json.Unmarshal([]byte(l), &o)
		at, err := time.Parse(time.RFC3339Nano, o.Time)
		if err != nil {
			t.Errorf("line %d: time %q: %v", i, o.Time, err)
		}
		if at.Before(last) {
			t.Errorf("line %d: time goes back", i)
		}
		last = at
		if o.Leader != want[i].leader || o.Term != want[i].term {
			t.Errorf("line %d: %q, want leader %q term %d", i, l, want[i].leader, want[i].term)
		}
	}
}

// TestFollowTextAndEnd checks the text format and that ending the
// election makes follow exit with 4 and one line on stderr.
func TestFollowTextAndEnd(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	f := startInProcess(t.Context(), t, "follow", "--store", storeURL, "--key", "k")
	if !waitFor(10*time.Second, func() bool { return len(f.stdout.lines()) >= 1 }) {
		t.Fatalf("no first line; stderr %q", f.stderr.String())
	}
	startCandidate(t, storeName, "k", "10.0.0.1:80", time.Minute)
	if !waitFor(10*time.Second, func() bool { return len(f.stdout.lines()) >= 2 }) {
		t.Fatalf("output %q", f.stdout.String())
	}
	code, out, errOut := runCLI(t, "end", "--store", storeURL, "--key", "k")
	if code != exitOK || errOut != "" || !strings.Contains(out, `ended the election at key "k" (leader was 10.0.0.1:80, term 1)`) {
		t.Errorf("end: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code := f.wait(t, 10*time.Second); code != exitEnded {
		t.Fatalf("follow exit %d, want %d; stderr %q", code, exitEnded, f.stderr.String())
	}
	if errOut := f.stderr.String(); strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, `leadership: follow: the election at key "k" was ended`) {
		t.Errorf("stderr %q", errOut)
	}
	line := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d) (-|\S+) \d+$`)
	lines := f.stdout.lines()
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("line %q is not TIME LEADER TERM", l)
		}
	}
	if !strings.HasSuffix(lines[0], " - 0") || !strings.HasSuffix(lines[1], " 10.0.0.1:80 1") || !strings.HasSuffix(lines[len(lines)-1], " - 1") {
		t.Errorf("lines %q", lines)
	}
}

// TestStoreErrors checks how commands report stores they cannot use.
func TestStoreErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"status", "--store", "nosuch://h:1", "--key", "k"}, exitUsage, `--store: open: store URL: scheme "nosuch": unknown`},
		{[]string{"follow", "--store", "memory://", "--key", "k"}, exitUsage, "--store: open: store URL: host"},
		{[]string{"end", "--store", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=1&sslmode=disable", "--key", "k"}, exitFailure, "cannot open postgres://u:xxxxx@127.0.0.1:1/db"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != tc.code || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr %q (want %q)", tc.args, code, tc.code, out, errOut, tc.want)
		}
		if strings.Contains(errOut, "secret") {
			t.Errorf("%v: the password shows: %q", tc.args, errOut)
		}
	}
}
