//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/memory"
)

// handleSlot receives the memory handle a command opens, when its context
// carries the slot (see captureHandles).
type handleSlot struct {
	mu sync.Mutex
	h  *memory.Store
}

type handleSlotKey struct{}

func (s *handleSlot) get() *memory.Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h
}

// captureHandles makes commands whose context carries a *handleSlot put
// the memory handle they open in it.
func captureHandles(t *testing.T) {
	old := openStoreFunc
	openStoreFunc = func(ctx context.Context, url string) (store.Store, error) {
		kv, err := old(ctx, url)
		if slot, ok := ctx.Value(handleSlotKey{}).(*handleSlot); ok && err == nil {
			slot.mu.Lock()
			slot.h, _ = kv.(*memory.Store)
			slot.mu.Unlock()
		}
		return kv, err
	}
	t.Cleanup(func() { openStoreFunc = old })
}

// recordingChild sets up the recording child for in-process runs: the
// records file, in the environment the children inherit, and the command.
func recordingChild(t *testing.T) (records string, argv []string) {
	t.Helper()
	records = filepath.Join(t.TempDir(), "records")
	t.Setenv(childRecordsEnv, records)
	t.Setenv("GORACE", childGorace())
	return records, []string{testExecutable(t)}
}

// testExecutable is this test binary, which plays the recording child.
func testExecutable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestRunChildEnvAndExit checks the child's environment and that a child
// exiting by itself ends run with its status, leadership released.
func TestRunChildEnvAndExit(t *testing.T) {
	storeURL, _ := memoryURL(t)
	p := startInProcess(t.Context(), t, "run", "--store", storeURL, "--key", "jobs/leader", "--name", "node-1", "--ttl", "1m", "--",
		"/bin/sh", "-c", `echo "$LEADERSHIP_LEADER $LEADERSHIP_KEY $LEADERSHIP_TOKEN $LEADERSHIP_TERM_STARTED"; exit 7`)
	if code := p.wait(t, 10*time.Second); code != 7 {
		t.Fatalf("exit %d, want 7; stderr:\n%s", code, p.stderr.String())
	}
	f := strings.Fields(p.stdout.String())
	if len(f) != 4 || f[0] != "node-1" || f[1] != "jobs/leader" || f[2] != "1" {
		t.Fatalf("child saw %q", p.stdout.String())
	}
	if _, err := time.Parse(time.RFC3339, f[3]); err != nil {
		t.Errorf("LEADERSHIP_TERM_STARTED %q: %v", f[3], err)
	}
	for _, want := range []string{"elected, token 1", "started COMMAND, pid", "exit status 7", "released leadership; exiting with status 7"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, p.stderr.String())
		}
	}
	// Released at once, although the TTL is a minute.
	if code, out, _ := runCLI(t, "status", "--store", storeURL, "--key", "jobs/leader"); code != exitNoLeader {
		t.Errorf("status after exit: %d %q", code, out)
	}
	// A COMMAND that does not exist.
	code, _, errOut := runCLI(t, "run", "--store", storeURL, "--key", "k", "--name", "n", "--", "/nonexistent/command")
	if code != exitNoExec || strings.Count(errOut, "\n") != 1 {
		t.Errorf("missing COMMAND: exit %d, stderr %q", code, errOut)
	}
}

// TestRunStopsChildOnSignal checks that cancelling run (SIGINT) stops the
// child, releases leadership at once and exits 0.
func TestRunStopsChildOnSignal(t *testing.T) {
	storeURL, _ := memoryURL(t)
	records, argv := recordingChild(t)
	p := startInProcess(t.Context(), t, append([]string{"run", "--store", storeURL, "--key", "k", "--name", "node-1", "--ttl", "1m", "--"}, argv...)...)
	start, _ := waitRecord(t, records, 0, 10*time.Second, func(r record) bool { return r.what == "start" })
	if start.name != "node-1" || start.token != 1 {
		t.Errorf("start record %+v", start)
	}
	if code := p.stop(t); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	recs := readRecords(records)
	if len(recs) != 2 || recs[1].what != "stop" || recs[1].pid != start.pid {
		t.Fatalf("records:\n%s", dumpRecords(records))
	}
	if processAlive(start.pid) {
		t.Errorf("child %d still alive", start.pid)
	}
	if code, out, _ := runCLI(t, "status", "--store", storeURL, "--key", "k"); code != exitNoLeader {
		t.Errorf("status after run stopped: %d %q (not released at once)", code, out)
	}
}

// TestRunLostLeaseStopsChildFirst partitions the leader's run from the
// store: its child, which ignores SIGTERM, must be killed (SIGKILL after
// the grace period) before the other run's child starts.
func TestRunLostLeaseStopsChildFirst(t *testing.T) {
	captureHandles(t)
	storeURL, _ := memoryURL(t)
	records, argv := recordingChild(t)
	t.Setenv(childIgnoreTermEnv, "1")
	const ttl = time.Second
	slots := map[string]*handleSlot{}
	runs := map[string]*inProcess{}
	for _, name := range []string{"node-1", "node-2"} {
		slots[name] = &handleSlot{}
		ctx := context.WithValue(t.Context(), handleSlotKey{}, slots[name])
		runs[name] = startInProcess(ctx, t, append([]string{"run", "--store", storeURL, "--key", "k", "--name", name,
			"--ttl", ttl.String(), "--grace", "200ms", "--"}, argv...)...)
	}
	first, _ := waitRecord(t, records, 0, 10*time.Second, func(r record) bool { return r.what == "start" })
	h := slots[first.name].get()
	if h == nil {
		t.Fatal("no handle captured")
	}
	cut := time.Now()
	memfault.Disconnect(h)
	var gone time.Time
	goneCh := make(chan struct{})
	go func() {
		defer close(goneCh)
		if waitFor(10*time.Second, func() bool { return !processAlive(first.pid) }) {
			gone = time.Now()
		}
	}()
	next, _ := waitRecord(t, records, 0, 10*time.Second, func(r record) bool { return r.what == "start" && r.name != first.name })
	<-goneCh
	if gone.IsZero() {
		t.Fatal("the partitioned leader's child never died")
	}
	t.Logf("partition -> old child gone %v, -> new child started %v (TTL %v)", gone.Sub(cut), next.at.Sub(cut), ttl)
	checkNoOverlap(t, records, map[int]time.Time{first.pid: gone})
	if log := runs[first.name].stderr.String(); !strings.Contains(log, "leadership ended: stopping COMMAND") || !strings.Contains(log, "SIGKILL") {
		t.Errorf("%s log lacks the stop and the SIGKILL:\n%s", first.name, log)
	}
	memfault.Reconnect(h)
	for name, p := range runs {
		if code := p.stop(t); code != exitOK {
			t.Errorf("%s exit %d; stderr:\n%s", name, code, p.stderr.String())
		}
	}
}

// TestRunRestart checks that with --restart a child exiting by itself is
// started again at the next term.
func TestRunRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out the restart backoff in real time")
	}
	storeURL, _ := memoryURL(t)
	records, argv := recordingChild(t)
	t.Setenv(childExitEnv, "0")
	// A TTL well above the child's life, so that the terms end by the
	// child's exits, not by renewals starved on a loaded machine.
	p := startInProcess(t.Context(), t, append([]string{"run", "--store", storeURL, "--key", "k", "--name", "node-1", "--ttl", "2s", "--restart", "--"}, argv...)...)
	waitRecord(t, records, 0, 30*time.Second, func(r record) bool { return r.what == "start" && r.token >= 3 })
	// Backing off: 500ms after the first quick exit, 1s after the second.
	for _, want := range []string{"campaigning again (--restart) in 500ms", "campaigning again (--restart) in 1s"} {
		if !waitFor(10*time.Second, func() bool { return strings.Contains(p.stderr.String(), want) }) {
			t.Errorf("log lacks %q:\n%s", want, p.stderr.String())
		}
	}
	if code := p.stop(t); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	checkNoOverlap(t, records, nil)
}

// TestRunElectionEnded checks that ending the election stops the child and
// makes run exit with 4.
func TestRunElectionEnded(t *testing.T) {
	storeURL, _ := memoryURL(t)
	records, argv := recordingChild(t)
	p := startInProcess(t.Context(), t, append([]string{"run", "--store", storeURL, "--key", "k", "--name", "node-1", "--ttl", "1m", "--"}, argv...)...)
	start, _ := waitRecord(t, records, 0, 10*time.Second, func(r record) bool { return r.what == "start" })
	if code, out, errOut := runCLI(t, "end", "--store", storeURL, "--key", "k"); code != exitOK {
		t.Fatalf("end: %d %q %q", code, out, errOut)
	}
	if code := p.wait(t, 10*time.Second); code != exitEnded {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitEnded, p.stderr.String())
	}
	waitRecord(t, records, 0, time.Second, func(r record) bool { return r.what == "stop" && r.pid == start.pid })
	if !strings.Contains(p.stderr.String(), `leadership: run: the election at key "k" was ended`) {
		t.Errorf("stderr:\n%s", p.stderr.String())
	}
}

// TestRestartBackoff checks the numbers of --restart's backoff: 500ms,
// doubling up to 30s, back to 500ms after a COMMAND that ran for a minute.
func TestRestartBackoff(t *testing.T) {
	var b restartBackoff
	var got []time.Duration
	for range 9 {
		got = append(got, b.delay(time.Second))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("delays %v, want %v", got, want)
	}
	if d := b.delay(time.Minute); d != 500*time.Millisecond {
		t.Errorf("after a COMMAND that ran a minute: %v, want 500ms", d)
	}
	if d := b.delay(59 * time.Second); d != time.Second {
		t.Errorf("next: %v, want 1s", d)
	}
}

// TestRunNameDefaultsToHostname checks that run without --name campaigns
// as the host name and the process id (in process here: this test's).
func TestRunNameDefaultsToHostname(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skipf("no host name: %v", err)
	}
	t.Setenv("LEADERSHIP_NAME", "")
	storeURL, _ := memoryURL(t)
	p := startInProcess(t.Context(), t, "run", "--store", storeURL, "--key", "k", "--ttl", "1m", "--", "/bin/sh", "-c", `echo "$LEADERSHIP_LEADER"`)
	if code := p.wait(t, 10*time.Second); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	if got, want := strings.TrimSpace(p.stdout.String()), fmt.Sprintf("%s_%d", host, os.Getpid()); got != want {
		t.Errorf("LEADERSHIP_LEADER %q, want the host name and the process id %q", got, want)
	}
}

// TestRunTry checks that run --try gives up with 6 when another candidate
// leads for longer, without starting COMMAND or disturbing the leader, and
// runs COMMAND as usual when elected in time.
func TestRunTry(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	holder := startCandidate(t, storeName, "k", "holder", time.Minute)
	leaderOf(t, []*testCandidate{holder})
	began := time.Now()
	code, out, errOut := runCLI(t, "run", "--store", storeURL, "--key", "k", "--name", "late", "--try", "300ms", "--", "/bin/sh", "-c", "echo started")
	took := time.Since(began)
	if code != exitNotElected {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitNotElected, errOut)
	}
	if out != "" {
		t.Errorf("COMMAND ran: %q", out)
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("gave up after %v, want about 300ms", took)
	}
	if !strings.Contains(errOut, "leadership: run: not elected within --try 300ms") {
		t.Errorf("stderr lacks the reason:\n%s", errOut)
	}
	if !holder.c.IsLeader() {
		t.Error("the holder lost leadership")
	}

	// Elected in time: --try no longer applies.
	code, out, errOut = runCLI(t, "run", "--store", storeURL, "--key", "free", "--name", "n", "--try", "10s", "--", "/bin/sh", "-c", "sleep 0.2; echo ran; exit 3")
	if code != 3 || out != "ran\n" {
		t.Errorf("elected in time: exit %d, stdout %q; stderr:\n%s", code, out, errOut)
	}
}

// TestRunChildGetsNoStoreURL: the store URL (which may hold a password)
// reaches COMMAND neither through LEADERSHIP_STORE nor through
// LEADERSHIP_STORE_FILE; --store-file reads it from a file that only its
// owner may read, and refuses any other.
func TestRunChildGetsNoStoreURL(t *testing.T) {
	storeURL, _ := memoryURL(t)
	file := filepath.Join(t.TempDir(), "store")
	if err := os.WriteFile(file, []byte(storeURL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	child := []string{"--", "/bin/sh", "-c", `echo "[$LEADERSHIP_STORE][$LEADERSHIP_STORE_FILE][$LEADERSHIP_LEADER]"`}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"LEADERSHIP_STORE", map[string]string{"LEADERSHIP_STORE": storeURL}, nil},
		{"LEADERSHIP_STORE_FILE", map[string]string{"LEADERSHIP_STORE_FILE": file}, nil},
		{"--store-file", nil, []string{"--store-file", file}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := append(append([]string{"run", "--key", "env/leader", "--name", "node-1", "--ttl", "1m"}, tc.args...), child...)
			p := startInProcess(t.Context(), t, args...)
			if code := p.wait(t, 10*time.Second); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			if got := strings.TrimSpace(p.stdout.String()); got != "[][][node-1]" {
				t.Errorf("COMMAND saw %q, want no store URL nor file", got)
			}
		})
	}

	loose := filepath.Join(t.TempDir(), "store")
	if err := os.WriteFile(loose, []byte(storeURL), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "status", "--store-file", loose, "--key", "k")
	if code != exitUsage || !strings.Contains(errOut, "chmod 600") {
		t.Errorf("a store file readable by others: exit %d, stderr %q", code, errOut)
	}
}
