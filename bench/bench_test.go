package main

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// captureOutput sends what the tool prints to two buffers until the test
// ends, and returns them.
func captureOutput(t *testing.T) (out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	saved, savedErr := stdout, stderr
	stdout, stderr = out, errOut
	t.Cleanup(func() { stdout, stderr = saved, savedErr })
	return out, errOut
}

func TestSummarizeNearestRank(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i) // 100 .. 1, unsorted
	}
	s := summarize(xs)
	if s.N != 100 || s.Min != 1 || s.Max != 100 || s.P50 != 50 || s.P99 != 99 || s.Median != 50.5 {
		t.Fatalf("summary %+v", s)
	}
	if summarize(nil) != nil {
		t.Fatal("a summary of no samples")
	}
}

func TestSplitURL(t *testing.T) {
	head, hosts, tail, err := splitURL("etcd://u:p@h1:1,h2:2/?tls=true")
	if err != nil || head != "etcd://u:p@" || strings.Join(hosts, " ") != "h1:1 h2:2" || tail != "/?tls=true" {
		t.Fatalf("%q %q %q %v", head, hosts, tail, err)
	}
	for _, bad := range []string{"h1:1", "redis:///db"} {
		if _, _, _, err := splitURL(bad); err == nil {
			t.Errorf("splitURL(%q) accepted", bad)
		}
	}
}

// A short run on the embedded store goes through every phase and prints
// the table.
func TestQuickRunOnMemory(t *testing.T) {
	out, errOut := captureOutput(t)
	args := []string{"--backends", "memory", "--rounds", "3", "--crash-rounds", "1", "--idle", "1s", "--ttl", "300ms", "--holdoff", "50ms"}
	if rc := run(args); rc != 0 {
		t.Fatalf("exit %d\n%s\n%s", rc, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "memory") {
		t.Fatalf("no memory row:\n%s", out.String())
	}
	t.Log(out.String())
}

func TestBadFlags(t *testing.T) {
	captureOutput(t)
	for _, args := range [][]string{{"--rounds", "0"}, {"--ttl", "1ms"}, {"--store", "nourl"}, {"extra"},
		{"--passes", "2"}, {"--processes", "--passes", "0"}, {"--processes", "--rounds", "3", "--passes", "4"}} {
		if rc := run(args); rc != 2 {
			t.Errorf("%v: exit %d, want 2", args, rc)
		}
	}
}
