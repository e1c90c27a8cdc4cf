package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leadership-go/leadership/store/memory"
)

// The recording child: leadership run starts the test binary itself as
// its COMMAND with childRecordsEnv naming a file. The child appends
//
//	start NAME TOKEN PID UNIXNANO [overlap=PID,...]
//	stop NAME TOKEN PID UNIXNANO
//
// when it starts and when SIGTERM makes it exit. Before it records its
// start, it checks that every child recorded before it is gone (no process,
// or a zombie): one that is not is listed as an overlap, so that two
// children running at once are caught at the very instant it would happen.
const (
	childRecordsEnv    = "LEADERSHIP_TEST_CHILD"             // the records file
	childIgnoreTermEnv = "LEADERSHIP_TEST_CHILD_IGNORE_TERM" // "1": ignore SIGTERM (run must SIGKILL)
	childExitEnv       = "LEADERSHIP_TEST_CHILD_EXIT"        // exit with this status after 50ms
)

// childGorace is GORACE for recording children: a binary built with -race
// otherwise sleeps a second at exit, which would slow every handoff.
func childGorace() string {
	return strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
}

// childMain is the recording child's main.
func childMain() {
	file := os.Getenv(childRecordsEnv)
	name, token := os.Getenv("LEADERSHIP_LEADER"), os.Getenv("LEADERSHIP_TOKEN")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	line := fmt.Sprintf("start %s %s %d %d", name, token, os.Getpid(), time.Now().UnixNano())
	var overlaps []string
	for _, r := range readRecords(file) {
		if r.what == "start" && r.pid != os.Getpid() && processAlive(r.pid) {
			overlaps = append(overlaps, strconv.Itoa(r.pid))
		}
	}
	if len(overlaps) > 0 {
		line += " overlap=" + strings.Join(overlaps, ",")
	}
	appendRecord(file, line)
	var exit <-chan time.Time
	if code := os.Getenv(childExitEnv); code != "" {
		exit = time.After(50 * time.Millisecond)
	}
	deadline := time.After(2 * time.Minute) // never outlive a broken test for long
	for {
		select {
		case <-sigs:
			if os.Getenv(childIgnoreTermEnv) == "1" {
				continue
			}
			appendRecord(file, fmt.Sprintf("stop %s %s %d %d", name, token, os.Getpid(), time.Now().UnixNano()))
			os.Exit(0)
		case <-exit:
			code, _ := strconv.Atoi(os.Getenv(childExitEnv))
			appendRecord(file, fmt.Sprintf("stop %s %s %d %d", name, token, os.Getpid(), time.Now().UnixNano()))
			os.Exit(code)
		case <-deadline:
			os.Exit(99)
		}
	}
}

// httpChildEnv, set to "1", makes the test binary started as the COMMAND
// of leadership run play an HTTP server instead (httpChildMain).
const httpChildEnv = "LEADERSHIP_TEST_HTTP_CHILD"

// httpChildStartup is how long the HTTP child takes to listen after it is
// started: the leader is named in the election before its server listens,
// as with a real service.
const httpChildStartup = 200 * time.Millisecond

// httpChildMain is the HTTP child's main: after httpChildStartup it listens
// on its first argument (host:port) and answers every request with its
// leader name (LEADERSHIP_LEADER). SIGTERM shuts it down gracefully: it
// stops listening at once and finishes the requests in flight.
func httpChildMain() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "http child: no address")
		os.Exit(98)
	}
	name := os.Getenv("LEADERSHIP_LEADER")
	select {
	case <-time.After(httpChildStartup):
	case <-sigs:
		os.Exit(0)
	}
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "http child:", err)
		os.Exit(97)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, name)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	select {
	case <-sigs:
	case <-time.After(5 * time.Minute): // never outlive a broken test for long
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	os.Exit(0)
}

// appendRecord appends one line to the records file (O_APPEND writes of a
// line are atomic between processes).
func appendRecord(file, line string) {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(98)
	}
	_, _ = f.WriteString(line + "\n")
	_ = f.Close()
}

// record is one line of a records file.
type record struct {
	what    string // start or stop
	name    string
	token   uint64
	pid     int
	at      time.Time
	overlap string // pids of earlier children still alive at a start
}

// readRecords parses a records file; a missing file has no records.
func readRecords(file string) []record {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []record
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		tok, _ := strconv.ParseUint(f[2], 10, 64)
		pid, _ := strconv.Atoi(f[3])
		ns, _ := strconv.ParseInt(f[4], 10, 64)
		r := record{what: f[0], name: f[1], token: tok, pid: pid, at: time.Unix(0, ns)}
		if len(f) > 5 {
			r.overlap = strings.TrimPrefix(f[5], "overlap=")
		}
		out = append(out, r)
	}
	return out
}

// processAlive reports whether pid is a live process (not a zombie).
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	switch s[i+2] {
	case 'Z', 'X', 'x':
		return false
	}
	return true
}

// waitFor polls cond every few milliseconds until it holds or timeout
// passes, and reports whether it held.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitRecord waits for the first record after the first skip records that
// matches, and returns it with its index.
func waitRecord(t *testing.T, file string, skip int, timeout time.Duration, match func(record) bool) (record, int) {
	t.Helper()
	var got record
	idx := -1
	ok := waitFor(timeout, func() bool {
		for i, r := range readRecords(file) {
			if i >= skip && match(r) {
				got, idx = r, i
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no matching record within %v; records:\n%s", timeout, dumpRecords(file))
	}
	return got, idx
}

func dumpRecords(file string) string {
	data, _ := os.ReadFile(file)
	return string(data)
}

// checkNoOverlap checks the records of a test: no child saw an earlier one
// alive when it started, the intervals [start, end] do not overlap, where
// end is the child's stop record or, for children killed without one, the
// time gone[pid] when it was observed gone, and tokens grow.
func checkNoOverlap(t *testing.T, file string, gone map[int]time.Time) {
	t.Helper()
	recs := readRecords(file)
	type interval struct {
		start, end time.Time
		pid        int
		token      uint64
	}
	var ivs []*interval
	byPid := map[int]*interval{}
	for _, r := range recs {
		switch r.what {
		case "start":
			if r.overlap != "" {
				t.Errorf("child pid %d (%s, token %d) started while pids %s were alive", r.pid, r.name, r.token, r.overlap)
			}
			iv := &interval{start: r.at, pid: r.pid, token: r.token}
			ivs, byPid[r.pid] = append(ivs, iv), iv
		case "stop":
			if iv := byPid[r.pid]; iv != nil {
				iv.end = r.at
			}
		}
	}
	for pid, at := range gone {
		if iv := byPid[pid]; iv != nil && iv.end.IsZero() {
			iv.end = at
		}
	}
	for i := 1; i < len(ivs); i++ {
		prev, cur := ivs[i-1], ivs[i]
		if prev.end.IsZero() {
			t.Errorf("child pid %d has no end but pid %d started after it", prev.pid, cur.pid)
			continue
		}
		if !cur.start.After(prev.end) {
			t.Errorf("child pid %d started at %v, before pid %d ended at %v", cur.pid, cur.start, prev.pid, prev.end)
		}
		if cur.token <= prev.token {
			t.Errorf("token %d of pid %d does not exceed %d of pid %d", cur.token, cur.pid, prev.token, prev.pid)
		}
	}
	if t.Failed() {
		t.Logf("records:\n%s", dumpRecords(file))
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// lines returns the complete lines written so far.
func (b *syncBuffer) lines() []string {
	s := b.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.Split(s[:i], "\n")
	}
	return nil
}

// inProcess is a command line running in-process in its own goroutine.
type inProcess struct {
	cancel         context.CancelFunc
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

// start runs args in-process under a context that stop cancels (as SIGINT
// would). ctx may carry test hooks.
func startInProcess(ctx context.Context, t *testing.T, args ...string) *inProcess {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	p := &inProcess{cancel: cancel, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.code = runContext(ctx, args, streams{stdout: p.stdout, stderr: p.stderr})
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop cancels the command and returns its exit code.
func (p *inProcess) stop(t *testing.T) int {
	t.Helper()
	p.cancel()
	return p.wait(t, 30*time.Second)
}

// wait waits for the command to end by itself and returns its exit code.
func (p *inProcess) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("command still running after %v; stderr:\n%s", timeout, p.stderr.String())
		return -1
	}
}

// testBinary builds the leadership command into a temporary directory.
func testBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	bin := filepath.Join(t.TempDir(), "leadership")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// cleanEnv is the environment for processes the tests start: this one's,
// without the LEADERSHIP_ variables that would set their flags, plus extra.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPrefix) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// proc is a process a test started, with its stderr collected.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	err    error
}

// startProc starts bin with args and waits for it in the background; the
// test's cleanup stops it (SIGTERM, then SIGKILL) by its pid.
func startProc(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	p.cmd.Stdout = p.stderr
	p.cmd.WaitDelay = 2 * time.Second // if a leftover process holds the pipes
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", p.name, p.stderr.String())
		}
	})
	return p
}

// signal sends sig to the process if it still runs.
func (p *proc) signal(sig syscall.Signal) {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// exitCode waits up to timeout for the process to exit and returns its
// exit code (-1 if a signal ended it).
func (p *proc) exitCode(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("%s still running after %v; stderr:\n%s", p.name, timeout, p.stderr.String())
		return -1
	}
}

// lineScanner returns the lines of s that contain sub.
func linesWith(s, sub string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.Contains(sc.Text(), sub) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// openHandle opens a handle on the memory store name, closed at the end of
// the test.
func openHandle(t *testing.T, name string) *memory.Store {
	t.Helper()
	h, err := memory.Open(context.Background(), memory.Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// foreignKey stores value, which is not an election record, at key "k" of
// a memory store unique to the test, and returns the store's URL and a
// handle on it.
func foreignKey(t *testing.T, value string) (string, *memory.Store) {
	t.Helper()
	storeURL, storeName := memoryURL(t)
	h := openHandle(t, storeName)
	if err := h.Put(t.Context(), "k", []byte(value), nil); err != nil {
		t.Fatal(err)
	}
	return storeURL, h
}

// upgradeEcho sends a raw request to upgrade to the echo protocol to the
// proxy at base, on a connection closed at the end of the test with a 10s
// deadline, and returns the connection, its reader, and the response or
// the error reading it.
func upgradeEcho(t *testing.T, base string) (net.Conn, *bufio.Reader, *http.Response, error) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(conn, "GET /upgrade HTTP/1.1\r\nHost: proxy\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	return conn, br, resp, err
}
