package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them. When
// started as the COMMAND of leadership run by a test, the binary plays the
// recording child instead (see childMain), or the HTTP child
// (httpChildMain) when httpChildEnv is set.
func TestMain(m *testing.M) {
	if os.Getenv(childRecordsEnv) != "" {
		childMain()
		return
	}
	if os.Getenv(httpChildEnv) == "1" {
		httpChildMain()
		return
	}
	goleak.VerifyTestMain(m)
}

// runCLI runs the command line args in-process and returns the exit code
// and what was written to stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestDemo runs the whole demo with a short TTL and checks every phase.
func TestDemo(t *testing.T) {
	code, out, errOut := runCLI(t, "demo", "--ttl", "300ms", "--candidates", "3")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	if errOut != "" {
		t.Errorf("unexpected stderr %q", errOut)
	}
	for _, want := range []string{
		"Phase 1: first election",
		"IsLeader now: ",
		"Phase 2: ",
		"calls Resign()",
		"handoff ",
		"Phase 3: ",
		"took over ",
		"x TTL",
		"at most one leader at any instant: OK",
		"Phase 4: ",
		"Summary (3 candidates, TTL 300ms)",
		"resign handoff (Resign -> next elected)",
		"vanish -> takeover (successor elected)",
		"(vanished) reported",
		"A proxy at http://127.0.0.1:",
		"3 requests via the proxy answered by: node-",
		"=> requests follow the leader: OK",
		`request via the proxy -> 200 "hello from node-`,
		"requests through the proxy got, in order: ",
		"vanish -> successor answered via proxy",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, node := range []string{"node-1", "node-2", "node-3"} {
		if !strings.Contains(out, node+"=") {
			t.Errorf("output lacks IsLeader of %s:\n%s", node, out)
		}
	}
}

// TestDemoFromEnv checks that flags come from the environment.
func TestDemoFromEnv(t *testing.T) {
	t.Setenv("LEADERSHIP_CANDIDATES", "2")
	t.Setenv("LEADERSHIP_TTL", "300ms")
	code, out, errOut := runCLI(t, "demo")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	if !strings.Contains(out, "Summary (2 candidates, TTL 300ms)") {
		t.Errorf("environment not applied:\n%s", out)
	}
}

// TestHelp checks the top-level and demo help texts.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := runCLI(t, args...)
		if code != exitOK || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		for _, want := range []string{"demo", "LEADERSHIP_TTL", "Exit status", "2  usage error"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: usage lacks %q:\n%s", args, want, out)
			}
		}
	}
	for _, args := range [][]string{{"demo", "--help"}, {"demo", "-h"}, {"help", "demo"}} {
		code, out, errOut := runCLI(t, args...)
		if code != exitOK || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		for _, want := range []string{
			"--candidates N", "--ttl DURATION", "--key KEY",
			"$LEADERSHIP_CANDIDATES", "$LEADERSHIP_TTL", "$LEADERSHIP_KEY",
			"(default 2s)", "Phases:", "Exit status",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: help lacks %q:\n%s", args, want, out)
			}
		}
	}
	code, _, errOut := runCLI(t)
	if code != exitUsage || !strings.Contains(errOut, "Commands:") {
		t.Errorf("no arguments: exit %d, stderr %q", code, errOut)
	}
	common := []string{"--store URL", "$LEADERSHIP_STORE", "--key KEY", "$LEADERSHIP_KEY", "memory://NAME", "Exit status", "2  usage error"}
	for cmd, wants := range map[string][]string{
		"run": {"--name NAME", "$LEADERSHIP_NAME", "the host name", "--try DURATION", "$LEADERSHIP_TRY", "6  --try", "500ms doubling to 30s", "--ttl DURATION", "(default 15s)", "--grace DURATION", "min(TTL/4, 5s)", "$LEADERSHIP_GRACE",
			"--restart", "LEADERSHIP_TOKEN", "LEADERSHIP_LEADER", "LEADERSHIP_TERM_STARTED", "margin = grace + TTL/10",
			"SIGKILL", "127  COMMAND could not be found", "4  the election was ended"},
		"follow": {"--json", "TIME LEADER TERM", `"-"`, "4  the election was ended"},
		"status": {"--json", "--no-wait", "$LEADERSHIP_NO_WAIT", "3  the election has no leader", "4  the election was ended", "5  unconfirmed", "one renew interval", "\"renewals\""},
		"proxy": {"--listen ADDR", "$LEADERSHIP_LISTEN", "--health-path PATH", `(default "/.leadership/health")`, "Retry-After: 1", "502", "Upgrade", "4  the election was ended",
			"--hold DURATION", "$LEADERSHIP_HOLD", "(default 5s)", "refuses the connection"},
		"end":    {"EndElection", "--force", "$LEADERSHIP_FORCE"},
		"delete": {"DeleteElection", "--force", "3.5s"},
	} {
		code, out, errOut := runCLI(t, cmd, "--help")
		if code != exitOK || errOut != "" {
			t.Errorf("%s --help: exit %d, stderr %q", cmd, code, errOut)
		}
		for _, want := range append(common, wants...) {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help lacks %q:\n%s", cmd, want, out)
			}
		}
	}
	_, out, _ := runCLI(t, "--help")
	for _, want := range []string{"run ", "follow ", "status ", "proxy ", "end ", "delete ", "3  status: the election has no leader", "4  follow, proxy, run", "5  status: unconfirmed", "6  run --try", "leadership version", "--version"} {
		if !strings.Contains(out, want) {
			t.Errorf("usage lacks %q:\n%s", want, out)
		}
	}
}

// noStore clears the variables that could give the store and the key, so
// that the tests do not depend on the environment they run in.
var noStore = map[string]string{"LEADERSHIP_STORE": "", "LEADERSHIP_KEY": "", "LEADERSHIP_NAME": ""}

// TestUsageErrors checks that mistakes exit with 2 and one line on stderr.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string // in the stderr line
	}{
		{"one candidate", nil, []string{"demo", "--candidates", "1"}, "--candidates 1"},
		{"too many candidates", nil, []string{"demo", "--candidates", "51"}, "--candidates 51"},
		{"zero ttl", nil, []string{"demo", "--ttl", "0"}, "--ttl 0s"},
		{"long ttl", nil, []string{"demo", "--ttl", "2m"}, "--ttl 2m: must be between 100ms and 1m"},
		{"bad ttl", nil, []string{"demo", "--ttl", "abc"}, `invalid value "abc" for flag --ttl`},
		{"ttl without unit", nil, []string{"demo", "--ttl", "15"}, `invalid value "15" for flag --ttl: 15 is not a duration (did you mean 15s?)`},
		{"run ttl without unit", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--ttl", "15", "--", "true"}, "15 is not a duration (did you mean 15s?)"},
		{"run grace without unit", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--grace", "2", "--", "true"}, "2 is not a duration (did you mean 2s?)"},
		{"proxy hold not a duration", noStore, []string{"proxy", "--store", "memory://x", "--key", "k", "--hold", "soon"}, `"soon" is not a duration: give a number and a unit`},
		{"env ttl without unit", map[string]string{"LEADERSHIP_TTL": "15"}, []string{"demo"}, "LEADERSHIP_TTL (for --ttl): 15 is not a duration (did you mean 15s?)"},
		{"unknown flag", nil, []string{"demo", "--nope"}, "not defined: --nope"},
		{"argument", nil, []string{"demo", "extra"}, `unexpected argument "extra"`},
		{"empty key", nil, []string{"demo", "--key", "/"}, "--key"},
		{"unknown command", nil, []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown help topic", nil, []string{"help", "frobnicate"}, `unknown command "frobnicate"`},
		{"top-level flag", nil, []string{"--ttl", "1s"}, "unknown flag --ttl"},
		{"bad env ttl", map[string]string{"LEADERSHIP_TTL": "bogus"}, []string{"demo"}, "LEADERSHIP_TTL"},
		{"bad env candidates", map[string]string{"LEADERSHIP_CANDIDATES": "1"}, []string{"demo"}, "--candidates 1"},
		{"run without store", noStore, []string{"run", "--key", "k", "--name", "n", "--", "true"}, "--store is required (or set LEADERSHIP_STORE)"},
		{"run without key", noStore, []string{"run", "--store", "memory://x", "--name", "n", "--", "true"}, "--key is required"},
		{"run negative try", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--try", "-1s", "--", "true"}, "--try -1s: must not be negative"},
		{"run without command", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--name", "n"}, "missing COMMAND"},
		{"run grace too long", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--name", "n", "--ttl", "2s", "--grace", "1s", "--", "true"},
			"--grace 1s leaves no safe margin: grace + 200ms (TTL/10) must be under half the --ttl 2s; lower --grace or raise --ttl"},
		{"run negative grace", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--name", "n", "--grace", "-1s", "--", "true"}, `invalid value "-1s" for flag --grace: negative duration`},
		{"run ttl", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--name", "n", "--ttl", "25h", "--", "true"}, "--ttl 25h0m0s: must be between"},
		{"run env grace", map[string]string{"LEADERSHIP_GRACE": "soon"}, []string{"run", "--", "true"}, "LEADERSHIP_GRACE"},
		{"follow without key", noStore, []string{"follow", "--store", "memory://x"}, "--key is required"},
		{"follow argument", noStore, []string{"follow", "--store", "memory://x", "--key", "k", "extra"}, `unexpected argument "extra"`},
		{"status unknown flag", noStore, []string{"status", "--store", "memory://x", "--key", "k", "--yaml"}, "not defined: --yaml"},
		{"status bad scheme", noStore, []string{"status", "--store", "nosuch://x", "--key", "k"}, `scheme "nosuch": unknown`},
		{"status no scheme", noStore, []string{"status", "--store", "localhost:2379", "--key", "k"}, "--store: open: store URL: scheme"},
		{"status bad scheme from env", map[string]string{"LEADERSHIP_STORE": "nosuch://x"}, []string{"status", "--key", "k"}, `scheme "nosuch"`},
		{"end without store", noStore, []string{"end", "--key", "k"}, "--store is required"},
		{"proxy without listen", noStore, []string{"proxy", "--store", "memory://x", "--key", "k"}, "--listen is required"},
		{"proxy bad listen", noStore, []string{"proxy", "--store", "memory://x", "--key", "k", "--listen", "8080"}, `--listen "8080": want host:port`},
		{"proxy negative hold", noStore, []string{"proxy", "--store", "memory://x", "--key", "k", "--listen", ":0", "--hold", "-1s"}, "--hold -1s: must not be negative"},
		{"run name with a space", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--name", "my host", "--", "true"}, `--name "my host": a name is one word`},
		{"run name with a tab from env", map[string]string{"LEADERSHIP_NAME": "a\tb"}, []string{"run", "--store", "memory://x", "--key", "k", "--", "true"}, `--name "a\tb"`},
		{"run name dash", noStore, []string{"run", "--store", "memory://x", "--key", "k", "--name", "-", "--", "true"}, `--name "-"`},
		{"env json yes", map[string]string{"LEADERSHIP_JSON": "yes"}, []string{"status", "--store", "memory://x", "--key", "k"}, `invalid value "yes" in environment variable LEADERSHIP_JSON (for --json): want true or false`},
		{"version extra", nil, []string{"version", "extra"}, "version takes no arguments"},
		{"proxy bad health path", noStore, []string{"proxy", "--store", "memory://x", "--key", "k", "--listen", ":0", "--health-path", "health"}, "must start with /"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out, errOut := runCLI(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stdout:\n%s", code, exitUsage, out)
			}
			if out != "" {
				t.Errorf("unexpected stdout:\n%s", out)
			}
			if n := strings.Count(errOut, "\n"); n != 1 || !strings.HasPrefix(errOut, "leadership: ") {
				t.Errorf("stderr is not one line starting with %q: %q", "leadership: ", errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q lacks %q", errOut, tc.want)
			}
		})
	}
}

// TestApplyEnv checks the environment helper on its own: the command line
// wins, empty variables are ignored, and dashes become underscores.
func TestApplyEnv(t *testing.T) {
	env := map[string]string{
		"LEADERSHIP_TTL":         "5s",
		"LEADERSHIP_KEY":         "from/env",
		"LEADERSHIP_RENEW_EVERY": "7s",
		"LEADERSHIP_NAME":        "",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	fs := newFlagSet("test")
	ttl := fs.Duration("ttl", time.Second, "")
	key := fs.String("key", "default", "")
	renew := fs.Duration("renew-every", 0, "")
	name := fs.String("name", "keep", "")
	if err := fs.Parse([]string{"--key", "from/flag"}); err != nil {
		t.Fatal(err)
	}
	if err := applyEnv(fs, lookup); err != nil {
		t.Fatal(err)
	}
	if *ttl != 5*time.Second || *key != "from/flag" || *renew != 7*time.Second || *name != "keep" {
		t.Errorf("got ttl %v key %q renew %v name %q", *ttl, *key, *renew, *name)
	}

	env["LEADERSHIP_TTL"] = "soon"
	fs = flag.NewFlagSet("test", flag.ContinueOnError)
	fs.Duration("ttl", time.Second, "")
	err := applyEnv(fs, lookup)
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "LEADERSHIP_TTL") {
		t.Errorf("malformed variable: got %v", err)
	}
}

// TestBinary builds the real command and runs the demo as a separate
// process.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "leadership")
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "demo", "--ttl", "300ms")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("leadership demo: %v\nstderr: %s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	if !strings.Contains(stdout.String(), "at most one leader at any instant: OK") {
		t.Errorf("unexpected output:\n%s", stdout.String())
	}

	cmd = exec.CommandContext(ctx, bin, "demo", "--candidates", "1")
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
		t.Errorf("--candidates 1: got %v, want exit status %d", err, exitUsage)
	}
}
