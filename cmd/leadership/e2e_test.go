//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests run the real binary as separate processes against
// every real store the environment names (scripts/servers.sh env prints
// these variables). A backend that store/open cannot open in this build is
// skipped, so that the tests start covering it as soon as it can.
var e2eBackends = []struct {
	name, env, scheme string
}{
	{"postgres", "LEADERSHIP_POSTGRES", ""}, // the variable holds the whole URL
	{"etcd", "LEADERSHIP_ETCD", "etcd://"},
	{"etcd-cluster", "LEADERSHIP_ETCD_CLUSTER", "etcd://"},
	{"consul", "LEADERSHIP_CONSUL", "consul://"},
	{"zookeeper", "LEADERSHIP_ZK", "zk://"},
	{"zookeeper-ensemble", "LEADERSHIP_ZK_ENSEMBLE", "zk://"},
	{"redis", "LEADERSHIP_REDIS", "redis://"},
	// The variable holds the namespace; the URL adds the candidate's
	// kubeconfig (rights: get, list, watch, create, update on leases).
	{"kube", "LEADERSHIP_KUBE_NAMESPACE", "k8s://"},
}

// e2eTTL is the lease of the end-to-end tests' candidates that are killed.
const e2eTTL = 2 * time.Second

// e2eLongTTL is the lease of the candidates whose handoff must come from
// their release: one within half of it cannot come from the lease running
// out, however loaded the machine.
const e2eLongTTL = time.Minute

// forEachBackend runs test as a subtest against every real store the
// environment names, with a store URL for the test's own table (PostgreSQL)
// and a key no other test or run uses.
func forEachBackend(t *testing.T, test func(t *testing.T, bin, url, key string)) {
	var names []string
	for _, b := range e2eBackends {
		if os.Getenv(b.env) != "" {
			names = append(names, b.name)
		}
	}
	if len(names) == 0 {
		t.Skip("no real store: set LEADERSHIP_POSTGRES (and LEADERSHIP_ETCD, ...; see scripts/servers.sh env) to run the end-to-end tests")
	}
	bin := testBinary(t)
	for _, b := range e2eBackends {
		v := os.Getenv(b.env)
		if v == "" || b.name == "kube" && os.Getenv("LEADERSHIP_KUBECONFIG_CANDIDATE") == "" {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			url := b.scheme + v
			if b.name == "postgres" {
				sep := "?"
				if strings.Contains(url, "?") {
					sep = "&"
				}
				url += sep + "table=cli_" + strings.ToLower(strings.SplitN(t.Name(), "/", 2)[0])
			}
			if b.name == "kube" {
				url += "?kubeconfig=" + neturl.QueryEscape(os.Getenv("LEADERSHIP_KUBECONFIG_CANDIDATE"))
			}
			key := fmt.Sprintf("cli-e2e/%s/%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
			probeBackend(t, bin, url, key)
			test(t, bin, url, key)
		})
	}
}

// probeBackend skips the test when this build cannot open the store URL,
// and fails it when the store cannot be reached (after a few tries: a
// shared server may refuse connections for a moment when busy).
func probeBackend(t *testing.T, bin, url, key string) {
	t.Helper()
	for try := 1; ; try++ {
		cmd := startProc(t, "probe", cleanEnv(), bin, "status", "--store", url, "--key", key)
		switch code := cmd.exitCode(t, time.Minute); {
		case code == exitOK || code == exitNoLeader:
			return
		case code == exitUsage && strings.Contains(cmd.stderr.String(), "scheme"):
			t.Skipf("store/open cannot open this store yet: %s", strings.TrimSpace(cmd.stderr.String()))
		case code == exitFailure && try < 3:
			t.Logf("leadership status: exit %d: %s (retrying)", code, strings.TrimSpace(cmd.stderr.String()))
			time.Sleep(time.Second)
		default:
			t.Fatalf("leadership status: exit %d: %s", code, cmd.stderr.String())
		}
	}
}

// TestE2ERunFailover runs three 'leadership run' processes whose COMMAND is
// the recording child: the first leads (lease e2eTTL), then two others
// (lease e2eLongTTL) join. It kills the leader's run with SIGKILL (its
// child must die with it, and another child start once the TTL has run
// out), then stops the next leader's run with SIGTERM (another child must
// start well before its TTL), and checks from the records that no two
// children ever ran at once.
func TestE2ERunFailover(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bin, url, key string) {
		records := filepath.Join(t.TempDir(), "records")
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		env := cleanEnv(childRecordsEnv+"="+records, "GORACE="+childGorace())
		runs := map[string]*proc{}
		start := func(name string, ttl time.Duration) {
			runs[name] = startProc(t, name, env, bin, "run", "--store", url, "--key", key, "--name", name, "--ttl", ttl.String(), "--", exe)
		}
		start("n1", e2eTTL)
		first, _ := waitRecord(t, records, 0, 30*time.Second, func(r record) bool { return r.what == "start" })
		start("n2", e2eLongTTL)
		start("n3", e2eLongTTL)
		// Once both wait: the takeover is then timed from the kill, not
		// from the start of a process (a race-built binary opening its
		// store took 12 s beside two busy CPUs).
		if !waitFor(60*time.Second, func() bool {
			return len(linesWith(runs["n2"].stderr.String(), "campaigning for key")) > 0 &&
				len(linesWith(runs["n3"].stderr.String(), "campaigning for key")) > 0
		}) {
			t.Fatalf("n2 and n3 not both campaigning after 60s; n2:\n%s\nn3:\n%s", runs["n2"].stderr.String(), runs["n3"].stderr.String())
		}

		// kill -9 the leader's run: the kernel kills its child.
		killed := time.Now()
		if err := runs[first.name].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-runs[first.name].done
		// Every child the killed run started, the first one or a later
		// one (a loaded machine can cost it a term and give it another
		// before the kill), dies with it.
		children := func() []int {
			var pids []int
			for _, r := range readRecords(records) {
				if r.what == "start" && r.name == first.name {
					pids = append(pids, r.pid)
				}
			}
			return pids
		}
		if !waitFor(10*time.Second, func() bool {
			for _, pid := range children() {
				if processAlive(pid) {
					return false
				}
			}
			return true
		}) {
			t.Fatalf("a child %v of the killed run still alive after 10s: no parent-death signal?", children())
		}
		gone := time.Now()
		goneAt := map[int]time.Time{}
		for _, pid := range children() {
			goneAt[pid] = gone
		}
		// The takeover itself comes within the TTL; the new child's record
		// may take much longer (a race-built test binary starting beside
		// two busy CPUs wrote none within 10s of its run's election).
		second, _ := waitRecord(t, records, 0, e2eTTL+60*time.Second, func(r record) bool { return r.what == "start" && r.name != first.name })
		takeover := second.at.Sub(killed)

		// SIGTERM the next leader's run: its child stops, leadership is
		// released at once.
		termed := time.Now()
		runs[second.name].signal(syscall.SIGTERM)
		stop, _ := waitRecord(t, records, 0, 10*time.Second, func(r record) bool { return r.what == "stop" && r.pid == second.pid })
		third, _ := waitRecord(t, records, 0, e2eLongTTL/2, func(r record) bool {
			return r.what == "start" && r.name != first.name && r.name != second.name
		})
		handoff := third.at.Sub(termed)
		if handoff > e2eLongTTL/2 {
			t.Errorf("handoff %v after the SIGTERM, want well before the TTL (under %v)", handoff, e2eLongTTL/2)
		}
		if code := runs[second.name].exitCode(t, 10*time.Second); code != exitOK {
			t.Errorf("SIGTERMed run exited with %d", code)
		}
		checkNoOverlap(t, records, goneAt)
		t.Logf("TTL %v: SIGKILL of %s's run -> its child gone %v, %s's child started %v (tokens %d -> %d); "+
			"TTL %v: SIGTERM of %s's run -> child stopped %v, %s's child started %v (token %d)",
			e2eTTL, first.name, gone.Sub(killed).Round(time.Millisecond), second.name, takeover.Round(time.Millisecond), first.token, second.token,
			e2eLongTTL, second.name, stop.at.Sub(termed).Round(time.Millisecond), third.name, handoff.Round(time.Millisecond), third.token)
	})
}

// TestE2EProxy runs a proxy process in front of three HTTP servers whose
// addresses are the names of three 'leadership run' processes: requests
// reach the leader's server, and follow the handoff when the leader's run
// gets SIGTERM.
func TestE2EProxy(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bin, url, key string) {
		env := cleanEnv()
		runs := map[string]*proc{}
		for range 3 {
			s := newNameServer(t)
			runs[s.addr] = startProc(t, s.addr, env, bin, "run", "--store", url, "--key", key, "--name", s.addr, "--ttl", e2eLongTTL.String(), "--", "sleep", "1000")
		}
		px, base := startProxyProc(t, env, bin, url, key)
		client := testClient()
		var leader string
		if !waitFor(30*time.Second, func() bool {
			code, ph := health(t, client, base)
			leader = ph.Leader
			return code == http.StatusOK
		}) {
			t.Fatal("the proxy never had a leader")
		}
		for i := range 20 {
			if code, body, _ := get(t, client, base+"/"); code != 200 || body != leader {
				t.Fatalf("request %d: %d %q, want the leader %s", i, code, body, leader)
			}
		}

		termed := time.Now()
		runs[leader].signal(syscall.SIGTERM)
		var next string
		unavailable := 0
		if !waitFor(10*time.Second, func() bool {
			code, body, _ := get(t, client, base+"/")
			switch {
			case code == http.StatusServiceUnavailable:
				unavailable++
			case code == 200 && body != leader:
				next = body
				return true
			case code != 200:
				t.Errorf("during the handoff: %d %q", code, body)
			}
			return false
		}) {
			t.Fatal("the proxy did not follow the handoff within 10s")
		}
		switched := time.Since(termed) // within 10s: well before the TTL
		if _, ok := runs[next]; !ok {
			t.Fatalf("answered by %q, not one of the servers", next)
		}
		for i := range 20 {
			if code, body, _ := get(t, client, base+"/"); code != 200 || body != next {
				t.Fatalf("after the handoff, request %d: %d %q, want %s", i, code, body, next)
			}
		}
		if code := runs[leader].exitCode(t, 10*time.Second); code != exitOK {
			t.Errorf("SIGTERMed run exited with %d", code)
		}
		px.signal(syscall.SIGTERM)
		if code := px.exitCode(t, 15*time.Second); code != exitOK {
			t.Errorf("proxy exited with %d after SIGTERM", code)
		}
		t.Logf("SIGTERM of the leader's run -> requests reach the next leader after %v (%d answers 503 meanwhile)",
			switched.Round(time.Millisecond), unavailable)
	})
}

// startProxyProc starts a 'leadership proxy' process on a free port of
// 127.0.0.1 and returns it with its base URL, once it listens.
func startProxyProc(t *testing.T, env []string, bin, url, key string, extra ...string) (*proc, string) {
	t.Helper()
	px := startProc(t, "proxy", env, bin, append([]string{"proxy", "--store", url, "--key", key, "--listen", "127.0.0.1:0"}, extra...)...)
	var base string
	if !waitFor(30*time.Second, func() bool {
		for _, l := range linesWith(px.stderr.String(), "listening on ") {
			base = strings.Fields(strings.SplitN(l, "listening on ", 2)[1])[0]
			base = strings.TrimSuffix(base, ",")
			return true
		}
		return false
	}) {
		t.Fatalf("proxy not listening: %s", px.stderr.String())
	}
	return px, base
}

// e2eAnswer is one answer a client got through the proxy.
type e2eAnswer struct {
	sent, got  time.Time
	code       int // -1: the request failed
	body       string
	retryAfter string
}

// e2eLoop sends a GET through the proxy at base every 5 ms, each on its
// own (a held request does not delay the next one), until stop is called
// (any number of times), which waits for every request sent and returns
// every answer; answers returns those so far.
func e2eLoop(base string) (answers func() []e2eAnswer, stop func() []e2eAnswer) {
	var mu sync.Mutex
	var all []e2eAnswer
	var inFlight sync.WaitGroup
	quit, done := make(chan struct{}), make(chan struct{})
	client := testClient()
	client.Timeout = time.Minute
	client.Transport = &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	send := func() {
		defer inFlight.Done()
		a := e2eAnswer{sent: time.Now(), code: -1}
		resp, err := client.Get(base + "/")
		if err != nil {
			a.body = err.Error()
		} else {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			a.code, a.body, a.retryAfter = resp.StatusCode, string(b), resp.Header.Get("Retry-After")
		}
		a.got = time.Now()
		mu.Lock()
		all = append(all, a)
		mu.Unlock()
	}
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				inFlight.Wait()
				client.CloseIdleConnections()
				return
			case <-tick.C:
				inFlight.Add(1)
				go send()
			}
		}
	}()
	answers = func() []e2eAnswer {
		mu.Lock()
		defer mu.Unlock()
		return append([]e2eAnswer(nil), all...)
	}
	var once sync.Once
	return answers, func() []e2eAnswer {
		once.Do(func() { close(quit); <-done })
		return answers()
	}
}

// TestE2EProxyHandoffs is the proxy's end-to-end test of issues 10 and 26:
// three 'leadership run' processes whose COMMAND is an HTTP server that
// listens only some time after it starts (so the new leader is named
// before its server listens), a proxy process in front of them, and a
// client sending a request every 5 ms across three SIGTERM handoffs and one
// kill -9 of the leader's run (each run that ends is replaced, so three
// always run). Every answer must be 200 from one of the servers or a 503
// with Retry-After given only once the proxy had held the request for
// --hold without finding a leader that answers; never 502, never a
// connection error. With the default --hold of 5s and a TTL of 2s, a
// handoff (a few hundred milliseconds) and a takeover after a crash (about
// one TTL) fit in the hold: no client sees an error.
func TestE2EProxyHandoffs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bin, url, key string) {
		exe := testExecutable(t)
		env := cleanEnv(httpChildEnv+"=1", "GORACE="+childGorace())
		runs := map[string]*proc{}
		add := func() {
			name := fmt.Sprintf("web-%d", len(runs)+1)
			addr := deadAddr(t)
			runs[name] = startProc(t, name, env, bin, "run", "--store", url, "--key", key, "--name", name, "--value", addr,
				"--ttl", e2eTTL.String(), "--", exe, addr)
		}
		for range 3 {
			add()
		}
		hold := proxyDefaultHold
		px, base := startProxyProc(t, cleanEnv(), bin, url, key, "--hold", hold.String())
		// The first leader, before the client starts: a slow start of three
		// processes may take longer than the hold.
		if !waitFor(time.Minute, func() bool { code, _ := health(t, testClient(), base); return code == http.StatusOK }) {
			t.Fatal("the proxy had no leader after a minute")
		}
		answers, stop := e2eLoop(base)
		defer stop()

		// await waits for a 200 answered by another than prev, sent after
		// since, and returns who answered and when.
		await := func(prev string, since time.Time, within time.Duration) (string, time.Time) {
			t.Helper()
			var who string
			var at time.Time
			if !waitFor(within, func() bool {
				for _, a := range answers() {
					if a.code == 200 && a.body != prev && a.sent.After(since) {
						who, at = a.body, a.got
						return true
					}
				}
				return false
			}) {
				t.Fatalf("no 200 from a leader other than %q within %v", prev, within)
			}
			if _, ok := runs[who]; !ok {
				t.Fatalf("answered by %q, not one of the runs", who)
			}
			return who, at
		}
		// gaps are the intervals from a signal to the successor's first
		// answer, for the summary.
		type gap struct {
			what       string
			from, to   time.Time
			prev, next string
		}
		leader, _ := await("", time.Time{}, time.Minute)
		var gaps []gap
		for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGTERM, syscall.SIGTERM, syscall.SIGKILL} {
			time.Sleep(300 * time.Millisecond) // answers from the leader between handoffs
			from := time.Now()
			runs[leader].signal(sig)
			next, to := await(leader, from, e2eTTL+30*time.Second)
			gaps = append(gaps, gap{what: fmt.Sprintf("%d: %v:", i+1, sig), from: from, to: to, prev: leader, next: next})
			if sig == syscall.SIGTERM {
				if code := runs[leader].exitCode(t, 15*time.Second); code != exitOK {
					t.Errorf("SIGTERMed run %s exited with %d", leader, code)
				}
			}
			add()
			leader = next
		}
		time.Sleep(300 * time.Millisecond)
		all := stop()

		// Every answer is a 200 from a run, or a 503 with Retry-After after
		// the whole hold.
		count := map[int]int{}
		var longest time.Duration
		errorf := func(format string, a ...any) { // the first 10 are enough
			if count[0]++; count[0] <= 10 {
				t.Errorf(format, a...)
			}
		}
		defer func() {
			if count[0] > 10 {
				t.Errorf("and %d more bad answers", count[0]-10)
			}
		}()
		for _, a := range all {
			count[a.code]++
			switch took := a.got.Sub(a.sent); a.code {
			case 200:
				if _, ok := runs[a.body]; !ok {
					errorf("200 answered by %q, not one of the runs", a.body)
				}
				longest = max(longest, took)
			case 503:
				if a.retryAfter != "1" {
					errorf("503 without Retry-After: 1 (%q): %q", a.retryAfter, a.body)
				}
				if took < hold {
					errorf("503 after %v, before the --hold of %v ran out (sent %v): %q", took, hold, a.sent.Format(time.StampMicro), a.body)
				}
			default:
				errorf("answer %d after %v (sent %v): %q; want only 200, or 503 once --hold ran out", a.code, took, a.sent.Format(time.StampMicro), a.body)
			}
		}
		if n := count[200]; n < 20 {
			t.Errorf("only %d answers 200", n)
		}
		if lines := linesWith(px.stderr.String(), " 502"); len(lines) > 0 {
			t.Errorf("the proxy logged 502s:\n%s", strings.Join(lines, "\n"))
		}
		px.signal(syscall.SIGTERM)
		if code := px.exitCode(t, 15*time.Second); code != exitOK {
			t.Errorf("proxy exited with %d after SIGTERM", code)
		}
		var summary []string
		for _, g := range gaps {
			summary = append(summary, fmt.Sprintf("%s %s -> %s in %v", g.what, g.prev, g.next, g.to.Sub(g.from).Round(time.Millisecond)))
		}
		t.Logf("%d requests: %d x 200, %d x 503, longest 200 %v; %s", len(all), count[200], count[503], longest.Round(time.Millisecond), strings.Join(summary, "; "))
	})
}

// TestE2EStatusTimings runs status against a live leader (a run at the
// default TTL of 15s), a released election and a leader killed with -9,
// checks what it answers, with and without --no-wait, and logs how long
// each answer took (issue 26: a live leader within one renew interval, a
// released election at once, a dead leader after its TTL).
func TestE2EStatusTimings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bin, url, key string) {
		env := cleanEnv()
		status := func(what string, wantCode int, wantLeader string, extra ...string) time.Duration {
			t.Helper()
			began := time.Now()
			p := startProc(t, "status", env, bin, append([]string{"status", "--store", url, "--key", key}, extra...)...)
			code := p.exitCode(t, time.Minute)
			took := time.Since(began)
			out := p.stderr.String() // stdout and stderr both
			if code != wantCode || !strings.Contains(out, " "+wantLeader+" ") {
				t.Errorf("status %v, %s: exit %d, output %q; want exit %d and %q", extra, what, code, out, wantCode, wantLeader)
			}
			t.Logf("status%s %s: exit %d in %v", strings.Join(append([]string{""}, extra...), " "), what, code, took.Round(time.Millisecond))
			return took
		}
		start := func(name string) *proc {
			p := startProc(t, name, env, bin, "run", "--store", url, "--key", key, "--name", name, "--", "sleep", "1000")
			if !waitFor(time.Minute, func() bool { return len(linesWith(p.stderr.String(), "elected, token")) > 0 }) {
				t.Fatalf("%s not elected after a minute:\n%s", name, p.stderr.String())
			}
			return p
		}

		live := start("live")
		for i := range 3 {
			time.Sleep(time.Duration(i) * time.Second) // not always just after a renewal
			status("of a live leader (TTL 15s, renewed every 3.6s)", exitOK, "live")
		}
		status("of a live leader", exitUnconfirmed, "-", "--no-wait")
		live.signal(syscall.SIGTERM)
		if code := live.exitCode(t, 30*time.Second); code != exitOK {
			t.Errorf("SIGTERMed run exited with %d", code)
		}
		status("of a released election", exitNoLeader, "-")
		status("of a released election", exitNoLeader, "-", "--no-wait")

		dead := start("dead")
		if err := dead.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-dead.done
		status("of a leader killed with -9", exitUnconfirmed, "-", "--no-wait")
		status("of a leader killed with -9", exitUnconfirmed, "-")
	})
}

// TestE2EFollow runs 'leadership follow --json' beside two 'leadership
// run' processes: it names the first leader, the second once the first's
// run gets SIGTERM, and no one once the second's run is killed with
// SIGKILL (after its lease, e2eTTL, unrenewed).
func TestE2EFollow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, bin, url, key string) {
		env := cleanEnv()
		f := startProc(t, "follow", env, bin, "follow", "--store", url, "--key", key, "--json")
		// leaders is what follow printed so far, a leader name per line.
		leaders := func() []string {
			var out []string
			for _, l := range linesWith(f.stderr.String(), `"leader"`) {
				var o observationJSON
				if err := json.Unmarshal([]byte(l), &o); err != nil {
					t.Fatalf("follow printed %q: %v", l, err)
				}
				out = append(out, o.Leader)
			}
			return out
		}
		waitLeader := func(want string, within time.Duration) {
			t.Helper()
			if !waitFor(within, func() bool {
				got := leaders()
				return len(got) > 0 && got[len(got)-1] == want
			}) {
				t.Fatalf("follow never named %q within %v; it printed %q", want, within, leaders())
			}
		}
		waitLeader("", 30*time.Second)
		n1 := startProc(t, "n1", env, bin, "run", "--store", url, "--key", key, "--name", "n1", "--ttl", e2eLongTTL.String(), "--", "sleep", "1000")
		waitLeader("n1", 30*time.Second)
		n2 := startProc(t, "n2", env, bin, "run", "--store", url, "--key", key, "--name", "n2", "--ttl", e2eTTL.String(), "--", "sleep", "1000")
		n1.signal(syscall.SIGTERM)
		waitLeader("n2", 30*time.Second)
		n2.signal(syscall.SIGKILL)
		waitLeader("", 30*time.Second)
	})
}

// TestE2ERunWithoutWriteRights runs 'leadership run' on the test API
// server as the follower identity (get, list, watch on leases, no create
// or update): it must exit 1 at its first refused write, naming the
// refusal, not campaign on.
func TestE2ERunWithoutWriteRights(t *testing.T) {
	ns, kubeconfig := os.Getenv("LEADERSHIP_KUBE_NAMESPACE"), os.Getenv("LEADERSHIP_KUBECONFIG_FOLLOWER")
	if ns == "" || kubeconfig == "" {
		t.Skip("needs the test API server: scripts/servers.sh start kube && eval \"$(scripts/servers.sh env)\"")
	}
	bin := testBinary(t)
	url := "k8s://" + ns + "?kubeconfig=" + neturl.QueryEscape(kubeconfig)
	key := fmt.Sprintf("cli-e2e/refused/%d", time.Now().UnixNano())
	p := startProc(t, "run", cleanEnv(), bin, "run", "--store", url, "--key", key, "--name", "n", "--", "sleep", "1000")
	if code := p.exitCode(t, time.Minute); code != exitFailure || !strings.Contains(p.stderr.String(), "the store refused this candidate") ||
		!strings.Contains(p.stderr.String(), "cannot create resource") {
		t.Fatalf("exit %d, output %q; want exit %d and the API server's refusal", code, p.stderr.String(), exitFailure)
	}
}
