package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/memory"
)

// memoryURL returns a memory:// store URL unique to the test.
func memoryURL(t *testing.T) (url, name string) {
	name = fmt.Sprintf("cli-%s-%d", strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()), time.Now().UnixNano())
	openHandle(t, name) // in use in this process: the commands do not warn that it is empty
	return "memory://" + name, name
}

// nameServer is a tiny HTTP server that answers its own address, streams
// on /stream and echoes on an Upgrade to "echo" at /upgrade.
type nameServer struct {
	addr    string
	srv     *httptest.Server
	release chan struct{} // /stream writes its last chunk once this is closed
	hits    atomic.Int64
}

func newNameServer(t *testing.T) *nameServer {
	t.Helper()
	ln := listenLocal(t)
	s := &nameServer{addr: ln.Addr().String(), release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.Header().Set("X-Forwarded-For-Seen", r.Header.Get("X-Forwarded-For"))
		w.Header().Set("X-Forwarded-Host-Seen", r.Header.Get("X-Forwarded-Host"))
		_, _ = io.WriteString(w, s.addr)
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprintf(w, "first %s\n", s.addr)
		w.(http.Flusher).Flush()
		select {
		case <-s.release:
			_, _ = io.WriteString(w, "last\n")
		case <-time.After(10 * time.Second):
			_, _ = io.WriteString(w, "timeout\n")
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/upgrade", func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "echo") || !strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") {
			http.Error(w, "want Upgrade: echo", http.StatusBadRequest)
			return
		}
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_ = rw.Flush()
		for {
			line, err := rw.ReadString('\n')
			if err != nil {
				return
			}
			_, _ = rw.WriteString(s.addr + ": " + line)
			if rw.Flush() != nil {
				return
			}
		}
	})
	s.srv = httptest.NewUnstartedServer(mux)
	_ = s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	return s
}

// testCandidate is a candidate of the in-process tests, on its own handle.
type testCandidate struct {
	name string
	h    *memory.Store
	c    *leadership.Candidate
}

// startCandidate starts a candidate named name on the memory store.
func startCandidate(t *testing.T, storeName, key, name string, ttl time.Duration, opts ...leadership.Option) *testCandidate {
	t.Helper()
	h, err := memory.Open(context.Background(), memory.Config{Name: storeName})
	if err != nil {
		t.Fatal(err)
	}
	c := leadership.NewCandidate(h, key, name, ttl, opts...)
	if _, _, err := c.RunForElection(); err != nil {
		t.Fatal(err)
	}
	tc := &testCandidate{name: name, h: h, c: c}
	t.Cleanup(func() {
		c.Stop()
		_ = h.Close()
	})
	return tc
}

// leaderOf returns the candidate that leads, waiting for one.
func leaderOf(t *testing.T, cands []*testCandidate) *testCandidate {
	t.Helper()
	var leader *testCandidate
	if !waitFor(10*time.Second, func() bool {
		for _, c := range cands {
			if c.c.IsLeader() {
				leader = c
				return true
			}
		}
		return false
	}) {
		t.Fatal("no leader within 10s")
	}
	return leader
}

// startTestProxy runs the proxy command in-process and returns its base URL.
func startTestProxy(t *testing.T, storeURL, key string, extra ...string) (*inProcess, string) {
	t.Helper()
	addrs := make(chan string, 1)
	proxyListening = func(addr string) { addrs <- addr }
	t.Cleanup(func() { proxyListening = func(string) {} })
	args := append([]string{"proxy", "--store", storeURL, "--key", key, "--listen", "127.0.0.1:0"}, extra...)
	p := startInProcess(context.Background(), t, args...)
	select {
	case addr := <-addrs:
		return p, "http://" + addr
	case <-p.done:
		t.Fatalf("proxy exited with %d: %s", p.code, p.stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("proxy not listening after 10s: %s", p.stderr.String())
	}
	return nil, ""
}

// testClient makes requests without keeping connections, so that no
// goroutine outlives a test.
func testClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

// get returns the status, body and header of a GET.
func get(t *testing.T, c *http.Client, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", url, err)
	}
	return resp.StatusCode, string(body), resp.Header
}

// health returns the proxy's health answer.
func health(t *testing.T, c *http.Client, base string) (int, proxyHealth) {
	t.Helper()
	code, body, h := get(t, c, base+proxyDefaultHealthPath)
	var ph proxyHealth
	if err := json.Unmarshal([]byte(body), &ph); err != nil {
		t.Fatalf("health body %q: %v", body, err)
	}
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("health Content-Type %q", ct)
	}
	return code, ph
}

// TestProxy runs the proxy command against three in-process candidates
// whose names are the addresses of three tiny servers.
func TestProxy(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	key := "svc/leader"
	client := testClient()
	p, base := startTestProxy(t, storeURL, key, "--hold", "200ms")

	// No leader yet: 503 with Retry-After once the hold ran out, health 503.
	code, body, h := get(t, client, base+"/anything")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" || !strings.Contains(body, "no leader") || !strings.Contains(body, "200ms (--hold)") {
		t.Errorf("no leader: %d Retry-After %q body %q", code, h.Get("Retry-After"), body)
	}
	if code, ph := health(t, client, base); code != http.StatusServiceUnavailable || ph.Ready || ph.Leader != "" {
		t.Errorf("health without leader: %d %+v", code, ph)
	}

	// A TTL long enough that a handoff within the waits below can only
	// come from a release, never from a lease running out.
	servers := map[string]*nameServer{}
	var cands []*testCandidate
	for range 3 {
		s := newNameServer(t)
		servers[s.addr] = s
		cands = append(cands, startCandidate(t, storeName, key, s.addr, time.Minute))
	}
	leader := leaderOf(t, cands)
	if !waitFor(10*time.Second, func() bool { c, ph := health(t, client, base); return c == 200 && ph.Leader == leader.name }) {
		t.Fatalf("health never named %s", leader.name)
	}
	code, ph := health(t, client, base)
	term, _ := leader.c.CurrentTerm()
	if code != 200 || !ph.Ready || ph.Term != term.Token {
		t.Errorf("health with leader: %d %+v, want term %d", code, ph, term.Token)
	}

	// Every request reaches the leader, with X-Forwarded-* set.
	for i := range 20 {
		code, body, h := get(t, client, fmt.Sprintf("%s/req/%d", base, i))
		if code != 200 || body != leader.name {
			t.Fatalf("request %d: %d %q, want 200 from %s", i, code, body, leader.name)
		}
		if h.Get("X-Forwarded-For-Seen") != "127.0.0.1" || h.Get("X-Forwarded-Host-Seen") != strings.TrimPrefix(base, "http://") {
			t.Errorf("X-Forwarded-For %q, X-Forwarded-Host %q", h.Get("X-Forwarded-For-Seen"), h.Get("X-Forwarded-Host-Seen"))
		}
	}
	for addr, s := range servers {
		if addr != leader.name && s.hits.Load() != 0 {
			t.Errorf("%s is not the leader but got %d requests", addr, s.hits.Load())
		}
	}

	// Streaming: the first chunk arrives while the server still holds the
	// response open.
	t.Run("stream", func(t *testing.T) {
		resp, err := client.Get(base + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		first := make(chan string, 1)
		br := bufio.NewReader(resp.Body)
		go func() {
			l, _ := br.ReadString('\n')
			first <- l
		}()
		select {
		case l := <-first:
			if l != "first "+leader.name+"\n" {
				t.Errorf("first chunk %q", l)
			}
		case <-time.After(5 * time.Second):
			close(servers[leader.name].release)
			t.Fatal("the first chunk did not come through before the response ended: the proxy buffers")
		}
		close(servers[leader.name].release)
		rest, _ := io.ReadAll(br)
		if string(rest) != "last\n" {
			t.Errorf("rest %q", rest)
		}
	})

	// Upgrade: a raw Upgrade request is switched and echoed by the leader.
	t.Run("upgrade", func(t *testing.T) {
		conn, br, resp, err := upgradeEcho(t, base)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Upgrade") != "echo" {
			t.Fatalf("upgrade: %s %v", resp.Status, resp.Header)
		}
		for _, msg := range []string{"ping", "pong"} {
			_, _ = io.WriteString(conn, msg+"\n")
			got, err := br.ReadString('\n')
			if err != nil || got != leader.name+": "+msg+"\n" {
				t.Fatalf("echo of %q: %q %v", msg, got, err)
			}
		}
	})

	// Resign: requests follow the handoff (within milliseconds; the
	// wait is generous, and still far under the TTL).
	resigned := time.Now()
	leader.c.Resign()
	var next string
	if !waitFor(10*time.Second, func() bool {
		code, body, _ := get(t, client, base+"/")
		if code == 200 && body != leader.name {
			next = body
			return true
		}
		return false
	}) {
		t.Fatal("requests did not follow the resign within 10s")
	}
	t.Logf("requests reached the next leader %s %v after Resign", next, time.Since(resigned))
	newLeader := leaderOf(t, cands)
	for i := range 10 {
		if code, body, _ := get(t, client, base+"/"); code != 200 || body != newLeader.name {
			t.Fatalf("after the handoff, request %d: %d %q, want %s", i, code, body, newLeader.name)
		}
	}

	// No leader: every candidate stops (releasing at once).
	for _, c := range cands {
		c.c.Stop()
	}
	if !waitFor(10*time.Second, func() bool { c, _, _ := get(t, client, base+"/"); return c == http.StatusServiceUnavailable }) {
		t.Fatal("no 503 after every candidate stopped")
	}
	code, body, h = get(t, client, base+"/x")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" || !strings.Contains(body, "no leader") {
		t.Errorf("after stop: %d Retry-After %q body %q", code, h.Get("Retry-After"), body)
	}
	if code, ph := health(t, client, base); code != http.StatusServiceUnavailable || ph.Ready {
		t.Errorf("health after stop: %d %+v", code, ph)
	}

	// A leader whose name is not an address: 503 naming it.
	startCandidate(t, storeName, key, "not-an-address", 2*time.Second)
	if !waitFor(10*time.Second, func() bool { _, ph := health(t, client, base); return ph.Leader == "not-an-address" }) {
		t.Fatal("health never named not-an-address")
	}
	code, body, _ = get(t, client, base+"/")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not an address") {
		t.Errorf("unusable name: %d %q", code, body)
	}
	if code, ph := health(t, client, base); code != http.StatusServiceUnavailable || ph.Ready || ph.Leader != "not-an-address" || ph.Address != "not-an-address" {
		t.Errorf("health with unusable name: %d %+v", code, ph)
	}

	if code := p.stop(t); code != exitOK {
		t.Errorf("proxy exit %d after cancel; stderr:\n%s", code, p.stderr.String())
	}
	for _, want := range []string{"listening on http://", "leader is 127.0.0.1:", "no leader", "not an address", "shutting down"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("proxy log lacks %q:\n%s", want, p.stderr.String())
		}
	}
}

// TestProxyNoLeaderWaits checks issue 26: a request that comes while there
// is no leader waits for one, up to --hold, and is answered by it; with no
// leader for the whole hold, it gets 503 with Retry-After, and not before.
// The health endpoint names the address requests go to.
func TestProxyNoLeaderWaits(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	_, base := startTestProxy(t, storeURL, "k", "--hold", "10s")
	client := testClient()
	client.Timeout = time.Minute
	type answer struct {
		code int
		body string
		took time.Duration
	}
	answers := make(chan answer, 1)
	sent := time.Now()
	go func() {
		resp, err := client.Get(base + "/")
		if err != nil {
			answers <- answer{-1, err.Error(), time.Since(sent)}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers <- answer{resp.StatusCode, string(b), time.Since(sent)}
	}()
	time.Sleep(300 * time.Millisecond) // the request waits meanwhile
	srv := newNameServer(t)
	startCandidate(t, storeName, "k", "svc", time.Minute, leadership.WithValue(srv.addr))
	if a := <-answers; a.code != 200 || a.body != srv.addr {
		t.Errorf("request sent without a leader: %d %q after %v, want 200 from the leader elected meanwhile", a.code, a.body, a.took)
	}
	if code, ph := health(t, client, base); code != 200 || !ph.Ready || ph.Leader != "svc" || ph.Address != "http://"+srv.addr {
		t.Errorf("health: %d %+v, want ready, leader svc at http://%s", code, ph, srv.addr)
	}

	// No leader for the whole hold: 503 once it ran out.
	storeURL2, _ := memoryURL(t)
	_, base2 := startTestProxy(t, storeURL2, "k", "--hold", "300ms")
	began := time.Now()
	code, body, h := get(t, client, base2+"/")
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Errorf("503 after %v, before the hold of 300ms ran out", took)
	}
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" || !strings.Contains(body, "no leader") {
		t.Errorf("no leader for the hold: %d %q (Retry-After %q)", code, body, h.Get("Retry-After"))
	}
}

// listenLocal listens on a free port of 127.0.0.1.
func listenLocal(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// deadAddr returns an address where nothing listens (a port just freed).
func deadAddr(t *testing.T) string {
	ln := listenLocal(t)
	defer ln.Close()
	return ln.Addr().String()
}

// TestProxyRefusedHoldsThen503 checks that a request the leader refuses
// is held for --hold and then answered 503 with Retry-After (never 502),
// and that the failures are logged at most one line a second.
func TestProxyRefusedHoldsThen503(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	dead := deadAddr(t)
	p, base := startTestProxy(t, storeURL, "k", "--hold", "300ms")
	startCandidate(t, storeName, "k", dead, time.Minute)
	client := testClient()
	if !waitFor(10*time.Second, func() bool { c, _ := health(t, client, base); return c == 200 }) {
		t.Fatal("no leader")
	}
	for i := range 10 {
		began := time.Now()
		code, body, h := get(t, client, base+"/")
		took := time.Since(began)
		if code != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" || !strings.Contains(body, "refused the connection for 300ms") {
			t.Fatalf("request %d to a dead leader: %d %q (Retry-After %q), want 503 with Retry-After: 1", i, code, body, h.Get("Retry-After"))
		}
		if took < 300*time.Millisecond {
			t.Errorf("request %d answered after %v, before the hold ran out", i, took)
		}
	}
	// A body of unknown length cannot be sent again: 503 at once.
	req, _ := http.NewRequest(http.MethodPost, base+"/", io.MultiReader(strings.NewReader("chunked")))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "not held") {
		t.Errorf("chunked POST to a dead leader: %d %q", resp.StatusCode, body)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("proxy exit %d", code)
	}
	// 11 failures in about 3s: at most 4 lines, each within its second, and
	// the rest counted.
	lines := linesWith(p.stderr.String(), "refused the connection")
	if len(lines) == 0 || len(lines) > 5 {
		t.Errorf("%d lines logged for 11 failures, want at most one a second:\n%s", len(lines), p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "more failed requests not logged") {
		t.Errorf("the log does not count the failures it left out:\n%s", p.stderr.String())
	}
	if strings.Contains(p.stderr.String(), ": 502") {
		t.Errorf("a 502 was logged:\n%s", p.stderr.String())
	}
}

// TestProxyHoldsUntilListening checks that a request held for a leader
// that does not listen yet is answered once it does (the handoff case:
// the leader is named before its server listens), and that a held request
// follows a change of leader address.
func TestProxyHoldsUntilListening(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	addr := deadAddr(t)
	p, base := startTestProxy(t, storeURL, "k")
	c := startCandidate(t, storeName, "k", "svc", time.Minute, leadership.WithValue(addr))
	client := testClient()
	if !waitFor(10*time.Second, func() bool { c, _ := health(t, client, base); return c == 200 }) {
		t.Fatal("no leader")
	}
	type answer struct {
		code int
		body string
	}
	answers := make(chan answer, 1)
	go func() {
		resp, err := client.Post(base+"/", "text/plain", strings.NewReader("small body"))
		if err != nil {
			answers <- answer{-1, err.Error()}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers <- answer{resp.StatusCode, string(b)}
	}()
	time.Sleep(300 * time.Millisecond) // the request is held meanwhile
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = fmt.Fprintf(w, "late %s", b)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	if a := <-answers; a.code != 200 || a.body != "late small body" {
		t.Errorf("held request: %d %q, want 200 from the server that started listening, with the body", a.code, a.body)
	}

	// Held for a dead address, then the leader publishes a live one.
	dead := deadAddr(t)
	if err := c.c.Proclaim(t.Context(), dead); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return strings.Contains(p.stderr.String(), "at "+dead) }) {
		t.Fatalf("the proxy never saw the new address:\n%s", p.stderr.String())
	}
	live := newNameServer(t)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = c.c.Proclaim(context.Background(), live.addr)
	}()
	if code, body, _ := get(t, client, base+"/"); code != 200 || body != live.addr {
		t.Errorf("held request across a new address: %d %q, want 200 from %s", code, body, live.addr)
	}
}

// TestProxyBadGateway checks the 502 when the leader accepts the
// connection but hangs up without an answer: after --hold for a GET, at
// once for a POST.
func TestProxyBadGateway(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	ln := listenLocal(t)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_ = conn.Close() // hang up without an answer
		}
	}()
	_, base := startTestProxy(t, storeURL, "k", "--hold", "200ms")
	startCandidate(t, storeName, "k", ln.Addr().String(), time.Second)
	client := testClient()
	if !waitFor(10*time.Second, func() bool { c, _ := health(t, client, base); return c == 200 }) {
		t.Fatal("no leader")
	}
	// A GET is tried again until --hold runs out, then 502.
	began := time.Now()
	code, body, _ := get(t, client, base+"/")
	if code != http.StatusBadGateway || !strings.Contains(body, "did not answer") {
		t.Errorf("leader hanging up: %d %q", code, body)
	}
	if took := time.Since(began); took < 200*time.Millisecond {
		t.Errorf("GET answered 502 after %v, before the hold ran out", took)
	}
	// A POST may have reached the leader: not sent again, 502 at once.
	began = time.Now()
	resp, err := client.Post(base+"/", "text/plain", strings.NewReader("once"))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("POST to a leader hanging up: %d", resp.StatusCode)
	}
	if took := time.Since(began); took > 150*time.Millisecond {
		t.Errorf("POST answered after %v: was it held?", took)
	}
}

// TestRateLimitedLog checks the failure log's rate limit on its own.
func TestRateLimitedLog(t *testing.T) {
	var out syncBuffer
	l := &rateLimitedLog{log: &logger{w: &out}, every: time.Hour}
	for i := range 5 {
		l.printf("failure %d", i)
	}
	if lines := out.lines(); len(lines) != 1 || !strings.HasSuffix(lines[0], "failure 0") {
		t.Fatalf("lines %q", lines)
	}
	l.mu.Lock()
	l.next = time.Time{} // the hour has passed
	l.mu.Unlock()
	l.printf("failure 5")
	l.printf("failure 6")
	l.flush()
	lines := out.lines()
	if len(lines) != 3 || !strings.HasSuffix(lines[1], "failure 5 (and 4 more failed requests not logged)") || !strings.HasSuffix(lines[2], "1 more failed requests not logged") {
		t.Errorf("lines %q", lines)
	}
}

// TestProxyRoutesByValue checks that a leader publishing a value (run
// --value, Proclaim) is reached at that address, not at its name, and
// that a new value moves the traffic within the term.
func TestProxyRoutesByValue(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	p, base := startTestProxy(t, storeURL, "k")
	first, second := newNameServer(t), newNameServer(t)
	c := startCandidate(t, storeName, "k", "billing-1", time.Minute, leadership.WithValue(first.addr))
	client := testClient()
	if !waitFor(10*time.Second, func() bool { code, body, _ := get(t, client, base+"/"); return code == 200 && body == first.addr }) {
		t.Fatal("requests never reached the published address")
	}
	if err := c.c.Proclaim(context.Background(), second.addr); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { code, body, _ := get(t, client, base+"/"); return code == 200 && body == second.addr }) {
		t.Fatal("requests never followed the new value")
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("proxy exit %d; stderr:\n%s", code, p.stderr.String())
	}
	if want := "leader is billing-1 (term 1) at " + first.addr; !strings.Contains(p.stderr.String(), want) {
		t.Errorf("proxy log lacks %q:\n%s", want, p.stderr.String())
	}
}

// TestProxyEnded checks that the proxy exits with 4 when the election ends.
func TestProxyEnded(t *testing.T) {
	storeURL, _ := memoryURL(t)
	p, _ := startTestProxy(t, storeURL, "k")
	// Nothing was ever written at the key: end needs --force.
	if code, out, errOut := runCLI(t, "end", "--store", storeURL, "--key", "k", "--force"); code != exitOK {
		t.Fatalf("end: %d %q %q", code, out, errOut)
	}
	if code := p.wait(t, 10*time.Second); code != exitEnded {
		t.Errorf("proxy exit %d, want %d; stderr:\n%s", code, exitEnded, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "was ended") {
		t.Errorf("stderr lacks the reason:\n%s", p.stderr.String())
	}
}

// TestLeaderURL checks which names are addresses.
func TestLeaderURL(t *testing.T) {
	for name, want := range map[string]string{
		"127.0.0.1:8080":                "http://127.0.0.1:8080",
		"node-1.example:80":             "http://node-1.example:80",
		"[::1]:9000":                    "http://[::1]:9000",
		"http://10.0.0.5:8080":          "http://10.0.0.5:8080",
		"https://api.example/prefix":    "https://api.example/prefix",
		"http://10.0.0.5:8080/x?y=1#f":  "http://10.0.0.5:8080/x",
		"":                              "",
		"node-1":                        "",
		":8080":                         "",
		"host:0":                        "",
		"host:http":                     "",
		"ftp://h:21":                    "",
		"http://":                       "",
		"http://user:pw@h:1":            "",
		"127.0.0.1:8080 trailing space": "",
	} {
		u, err := leaderURL(name)
		switch {
		case want == "" && err == nil:
			t.Errorf("%q: got %v, want an error", name, u)
		case want != "" && (err != nil || u.String() != want):
			t.Errorf("%q: got %v, %v, want %s", name, u, err, want)
		}
	}
}

// TestProxyShutdownClosesUpgrades checks that stopping the proxy closes
// upgraded connections and does not wait for them.
func TestProxyShutdownClosesUpgrades(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	s := newNameServer(t)
	// A shutdown timeout far longer than stop waits (30s): stop returns
	// only if the proxy does not wait for the upgraded connection.
	p, base := startTestProxy(t, storeURL, "k", "--shutdown-timeout", "10m")
	startCandidate(t, storeName, "k", s.addr, time.Minute)
	client := testClient()
	if !waitFor(10*time.Second, func() bool { c, _ := health(t, client, base); return c == 200 }) {
		t.Fatal("no leader")
	}
	conn, br, resp, err := upgradeEcho(t, base)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	began := time.Now()
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	t.Logf("shutdown took %v", time.Since(began))
	// Closed: the read ends at once, not at its deadline.
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadString('\n'); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the upgraded connection is still open after the proxy stopped: %v", err)
	}
}
