package main

import (
	"runtime"
	"strings"
	"testing"
)

// TestVersion checks --version: the module version ("(devel)" in a test
// binary) and the Go version, on stdout.
func TestVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-version", "version"} {
		code, out, errOut := runCLI(t, flag)
		if code != exitOK || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q", flag, code, errOut)
		}
		if !strings.HasPrefix(out, "leadership (devel) "+runtime.Version()+" ") || strings.Count(out, "\n") != 1 {
			t.Errorf("%s: %q, want leadership (devel) %s ...", flag, out, runtime.Version())
		}
	}
	if code, _, _ := runCLI(t, "--version", "extra"); code != exitUsage {
		t.Errorf("--version extra: exit %d, want %d", code, exitUsage)
	}
}
