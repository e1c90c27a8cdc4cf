//go:build linux

package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
		if v == "" {
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

		// kill -9 the leader's run: the kernel kills its child.
		killed := time.Now()
		if err := runs[first.name].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if !waitFor(10*time.Second, func() bool { return !processAlive(first.pid) }) {
			t.Fatalf("child %d of the killed run still alive after 10s: no parent-death signal?", first.pid)
		}
		gone := time.Now()
		second, _ := waitRecord(t, records, 0, e2eTTL+10*time.Second, func(r record) bool { return r.what == "start" && r.name != first.name })
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
		checkNoOverlap(t, records, map[int]time.Time{first.pid: gone})
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
		px := startProc(t, "proxy", env, bin, "proxy", "--store", url, "--key", key, "--listen", "127.0.0.1:0")
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
