package main

import (
	"strings"
	"testing"
	"time"
)

// A reader of memory:// is told it sees only its own, empty store.
func TestMemoryReaderWarned(t *testing.T) {
	for _, args := range [][]string{
		{"status", "--store", "memory://notice-status", "--key", "k"},
		{"end", "--store", "memory://notice-end", "--key", "k", "--force"},
	} {
		_, _, stderr := runCLI(t, args...)
		if !strings.Contains(stderr, "memory://"+strings.TrimPrefix(args[2], "memory://")+" is an embedded store inside this process") {
			t.Errorf("%s: stderr %q, want the memory:// warning", args[0], stderr)
		}
	}
	_, _, stderr := runCLI(t, "status", "--store", "etcd://127.0.0.1:1", "--key", "k")
	if strings.Contains(stderr, "embedded store") {
		t.Errorf("status on etcd warns of memory://: %q", stderr)
	}
}

// Candidates in one process share memory://NAME: no warning. A second
// process on the same name is warned that both will lead.
func TestMemoryCandidateWarnedOnlyAcrossProcesses(t *testing.T) {
	_, _, stderr := runCLI(t, "run", "--store", "memory://notice-run", "--key", "k", "--name", "a", "--", "true")
	if strings.Contains(stderr, "warning") {
		t.Errorf("a lone in-process candidate was warned: %q", stderr)
	}
	bin := testBinary(t)
	first := startProc(t, "first", cleanEnv(), bin, "run", "--store", "memory://notice-procs", "--key", "k", "--name", "a", "--", "sleep", "60")
	if !waitFor(30*time.Second, func() bool { return strings.Contains(first.stderr.String(), "started COMMAND") }) {
		t.Fatalf("first run never started its command:\n%s", first.stderr.String())
	}
	if strings.Contains(first.stderr.String(), "warning") {
		t.Errorf("the first process was warned: %q", first.stderr.String())
	}
	second := startProc(t, "second", cleanEnv(), bin, "run", "--store", "memory://notice-procs", "--key", "k", "--name", "b", "--", "true")
	if code := second.exitCode(t, 30*time.Second); code != 0 {
		t.Errorf("second run: exit %d", code)
	}
	if want := "another process (pid "; !strings.Contains(second.stderr.String(), want) {
		t.Errorf("second process: stderr %q, want %q", second.stderr.String(), want)
	}
}
