package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leadership-go/leadership"
)

// Defaults of the proxy.
const (
	proxyDefaultHealthPath = "/.leadership/health"
	proxyDefaultShutdown   = 10 * time.Second
	// proxyRetryAfter is the Retry-After, in seconds, of a 503: leaderless
	// gaps last from milliseconds (a handoff) to one TTL (a crash), and a
	// client retrying every second finds the new leader soon after.
	proxyRetryAfter = 1
	// proxyDialTimeout bounds connecting to the leader, so that an
	// unreachable one answers 502 quickly.
	proxyDialTimeout = 5 * time.Second
	// proxyDefaultHold is how long a request whose connection the leader
	// refused is held and retried by default. A handoff leaves nothing
	// listening for milliseconds (the successor is named before its
	// COMMAND has started listening) up to a service's start-up time,
	// typically well under a second; 5s covers a slow start-up while
	// staying under the timeouts of common clients (10s and more), which
	// then get a 503 with Retry-After rather than a timeout of their own.
	// A crashed leader is named until its follower sees it go (90% of its
	// TTL): with a TTL under the hold, requests wait for its successor too.
	proxyDefaultHold = 5 * time.Second
	// proxyRetryMin and proxyRetryMax bound the pause between two tries of
	// a held request: it doubles from the one to the other.
	proxyRetryMin = 5 * time.Millisecond
	proxyRetryMax = 100 * time.Millisecond
	// proxyFinalTries is how many tries follow a hold that ran out on a
	// dropped request, proxyRetryMax apart: a leader killed mid-request
	// resets connections for a moment before it refuses them, and only a
	// leader still dropping after these is answered with a 502.
	proxyFinalTries = 3
	// proxyMaxRetryBody is the largest request body the proxy keeps to
	// send again: a request with a larger body, or one of unknown length
	// (chunked), is not held.
	proxyMaxRetryBody = 64 << 10
	// proxyLogEvery is the least time between two lines that log failed
	// requests; the lines left out meanwhile are counted in the next one.
	proxyLogEvery = time.Second
)

const proxyAbout = `
An HTTP reverse proxy to the leader of the election at --key: every request
goes to the address the current leader advertises: the value it publishes
beside its name (run --value), or else its name; either "host:port"
(proxied to http://host:port) or a full http:// or https:// URL (its path
is prefixed to the request's). The leader is read for every
request, so the proxy follows a change as soon as its follower sees it
(milliseconds after a handoff; within 90% of the TTL after a leader
vanished, before anyone else can take over).

  - no leader (between a release and the next election, or after a crash):
    the request waits for one, for up to --hold from its arrival, and goes
    to it; if none is elected in time, 503 with "Retry-After: 1" and a
    one-line text body. A clean handoff thus gives no client an error;
  - a leader whose name is not an address: 503 at once, the same way;
  - the leader refuses the connection (nothing listens there yet, as
    during a handoff): the request is held and tried again, with the leader
    read anew before each try, until --hold has passed since it arrived;
    then 503 with "Retry-After: 1". Only requests whose body the proxy can
    send again are held: no body, or a body of known length up to 64 KiB
    (kept in memory); others get the 503 at once. Nothing was sent to any
    leader then, so the client can safely retry;
  - an idempotent request (GET, HEAD, OPTIONS, TRACE, without a body)
    whose connection broke before any answer (reset or closed, as when the
    leader is killed while serving it) is held and tried again the same
    way; when --hold runs out, it gets 502;
  - the leader fails otherwise (connect timeout of 5s, connection reset or
    closed on other requests): 502;
  - responses are streamed (flushed as they come), and Upgrade requests
    (WebSocket and others) are passed through;
  - X-Forwarded-For, X-Forwarded-Host and X-Forwarded-Proto are set (those
    the client sent are replaced); the Host header is the leader's;
  - GET --health-path answers
    {"leader":"NAME","address":"http://host:port","term":N,"ready":true}
    with 200 when a leader with a usable address is known (address is
    where requests go), ready false and 503 otherwise (address is then the
    unusable value, or "" without a leader); it is never proxied.

SIGINT or SIGTERM stops accepting connections and waits up to
--shutdown-timeout for requests in flight (upgraded connections are closed),
then exits 0 (held requests get their 503 at once). If the election is
ended, the proxy shuts down the same way and exits with 4. Leader changes
are logged on stderr, and failed requests at most one line a second (the
next line counts those left out).` + storeAbout

// proxyConfig holds the proxy's flags.
type proxyConfig struct {
	electionFlags
	listen          string
	healthPath      string
	shutdownTimeout time.Duration
	hold            time.Duration
}

// proxyCommand describes the proxy subcommand.
func proxyCommand() *command {
	return &command{
		name:    "proxy",
		args:    "--store URL --key KEY --listen ADDR [--hold 5s] [--health-path PATH] [--shutdown-timeout 10s]",
		summary: "HTTP reverse proxy to whichever process leads (names are addresses)",
		about:   proxyAbout,
		exits:   endedExit,
		setup: func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
			var cfg proxyConfig
			cfg.add(fs)
			fs.StringVar(&cfg.listen, "listen", "", "listen on `ADDR` (host:port, such as :8080 or 127.0.0.1:0), required")
			fs.StringVar(&cfg.healthPath, "health-path", proxyDefaultHealthPath, "serve the proxy's own health at `PATH` (not proxied)")
			durationFlag(fs, &cfg.shutdownTimeout, "shutdown-timeout", proxyDefaultShutdown, "on SIGINT/SIGTERM, wait this `DURATION` for requests in flight")
			durationFlag(fs, &cfg.hold, "hold", proxyDefaultHold, "hold a request for up to this `DURATION` while there is no leader, the leader refuses the connection, or an idempotent request's connection broke before any answer (the leader killed mid-flight), until a leader answers; then 503 (502 for a broken one; 0: answer at once)")
			return flagsOnly("proxy", cfg.validate, func(ctx context.Context, s streams) error { return runProxy(ctx, cfg, s) })
		},
	}
}

// validate checks the proxy's flags.
func (c *proxyConfig) validate() error {
	if err := c.electionFlags.validate(); err != nil {
		return err
	}
	switch {
	case c.listen == "":
		return usageErrorf("--listen is required (or set LEADERSHIP_LISTEN), as in --listen :8080")
	case !strings.HasPrefix(c.healthPath, "/"):
		return usageErrorf("--health-path %q: must start with /", c.healthPath)
	case c.shutdownTimeout < 0:
		return usageErrorf("--shutdown-timeout %v: must not be negative", c.shutdownTimeout)
	case c.hold < 0:
		return usageErrorf("--hold %v: must not be negative", c.hold)
	}
	if _, _, err := net.SplitHostPort(c.listen); err != nil {
		return usageErrorf("--listen %q: want host:port, as in :8080 or 127.0.0.1:8080", c.listen)
	}
	return nil
}

// proxyListening is called with the address the proxy listens on, once it
// does (tests use it; the command logs the address too).
var proxyListening = func(addr string) {}

// runProxy serves the proxy until ctx ends or the election does.
func runProxy(ctx context.Context, cfg proxyConfig, s streams) error {
	f, errs, stop, err := cfg.follow(ctx, s.stderr)
	if err != nil {
		return err
	}
	defer stop()
	lg := &logger{w: s.stderr, prefix: "leadership proxy: "}

	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	p := newLeaderProxy(f.Current, cfg.key, cfg.healthPath, cfg.hold, lg)
	defer p.Close()
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(lg, "", 0),
	}
	srv.RegisterOnShutdown(p.closeUpgraded)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	lg.printf("listening on http://%s, proxying to the leader of key %q on %s", ln.Addr(), cfg.key, cfg.redacted())
	proxyListening(ln.Addr().String())

	var result error
	var logged leadership.Status // the last leader state logged
	obs := f.Status()
loop:
	for {
		select {
		case <-ctx.Done():
			// A change the follower saw but this loop had not read yet
			// (both were ready) is logged before the shutdown.
			if cur := f.Current(); cur.Leader != logged.Leader || cur.Token != logged.Token {
				logLeader(lg, cur)
			}
			lg.printf("shutting down")
			break loop
		case err := <-served:
			return fmt.Errorf("serve: %w", err)
		case o, ok := <-obs:
			if !ok {
				<-f.Done()
				if errors.Is(f.Err(), leadership.ErrElectionEnded) {
					lg.printf("the election was ended: shutting down")
					result = endedError(cfg.key)
				}
				break loop
			}
			logLeader(lg, o)
			logged = o
			p.leaderChanged()
		case err, ok := <-errs:
			errs = lg.storeError(errs, err, ok)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		lg.printf("requests still in flight after %v: closing them", cfg.shutdownTimeout)
		_ = srv.Close()
	}
	<-served
	return result
}

// leaderAddress is where the proxy sends requests: the value the leader
// publishes beside its name (run --value), or else its name.
func leaderAddress(o leadership.Status) string {
	if o.Value != "" {
		return o.Value
	}
	return o.Leader
}

// logLeader logs a leader change seen by the proxy's follower.
func logLeader(lg *logger, o leadership.Status) {
	addr := leaderAddress(o)
	switch _, err := leaderURL(addr); {
	case o.Leader == "":
		lg.printf("no leader (last term %d): answering 503", o.Token)
	case err != nil:
		lg.printf("leader is %q (term %d), %q is not an address: answering 503", o.Leader, o.Token, addr)
	case addr != o.Leader:
		lg.printf("leader is %s (term %d) at %s", o.Leader, o.Token, addr)
	default:
		lg.printf("leader is %s (term %d)", o.Leader, o.Token)
	}
}

// leaderProxy is the proxy's handler: it forwards every request to the
// leader its current function names at the time of the request.
type leaderProxy struct {
	current    func() leadership.Status
	key        string
	healthPath string
	hold       time.Duration // how long a refused request is held
	log        *logger
	failures   *rateLimitedLog // failed requests, at most one line a second
	transport  *http.Transport
	rp         *httputil.ReverseProxy

	upgraded context.Context // ends when the server shuts down
	cancel   context.CancelFunc

	mu      sync.Mutex
	changed chan struct{} // closed (and replaced) when the leader changes
}

// proxyTarget is what a request is forwarded to, carried in its context
// from ServeHTTP to the reverse proxy's hooks, and how the try went.
type proxyTarget struct {
	leader string
	term   uint64
	url    *url.URL
	// idempotent is set for a request that may be sent again even if the
	// leader may have received it (GET, HEAD, OPTIONS, TRACE, no body).
	idempotent bool
	// retry is set by the error handler when the try failed in a way that
	// can be repeated, and nothing was answered yet: the leader refused the
	// connection (nothing was sent), or an idempotent request's connection
	// broke before any answer (the leader went away while serving it).
	retry error
}

type proxyTargetKey struct{}

// newLeaderProxy returns a proxy to the leader current names, which holds
// requests refused by the leader for up to hold. Close it to drop its idle
// connections.
func newLeaderProxy(current func() leadership.Status, key, healthPath string, hold time.Duration, lg *logger) *leaderProxy {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // the leader is reached directly, whatever HTTP_PROXY says
	t.DialContext = (&net.Dialer{Timeout: proxyDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	p := &leaderProxy{current: current, key: key, healthPath: healthPath, hold: hold, log: lg, transport: t,
		failures: &rateLimitedLog{log: lg, every: proxyLogEvery}, changed: make(chan struct{})}
	p.upgraded, p.cancel = context.WithCancel(context.Background())
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			target := pr.In.Context().Value(proxyTargetKey{}).(*proxyTarget)
			pr.SetURL(target.url)
			pr.SetXForwarded()
		},
		Transport:     t,
		FlushInterval: -1, // flush every write: streams pass through as they come
		ErrorLog:      log.New(p.failures, "", 0),
		ErrorHandler:  p.badGateway,
	}
	return p
}

// ServeHTTP answers the health path itself and forwards everything else
// to the leader. A request that comes while there is no leader waits for
// one, for up to --hold (then 503). A request whose connection the leader
// refused (or, for an idempotent one, dropped before any answer) is held
// and tried again, the leader read anew each time, until it is answered or
// --hold has passed since it came (then 503, or 502 if the last try was
// dropped).
func (p *leaderProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	deadline := time.Now().Add(p.hold)
	o := p.current()
	if r.URL.Path == p.healthPath {
		p.health(w, o)
		return
	}
	ctx := r.Context()
	if o.Leader == "" {
		o = p.awaitLeader(ctx, deadline)
	}
	target, err := leaderURL(leaderAddress(o))
	if err != nil {
		if ctx.Err() == nil {
			msg := p.noTarget(o, err)
			p.failures.printf("%s %s: 503: %s", r.Method, r.URL.Path, msg)
			unavailable(w, msg)
		}
		return
	}
	if r.Header.Get("Upgrade") != "" {
		// An upgraded connection lives until one side closes it; end it
		// when the server shuts down (Shutdown does not track hijacked
		// connections).
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(p.upgraded, cancel)()
	}
	body, retryable, err := retryBody(r)
	if err != nil {
		http.Error(w, "leadership proxy: cannot read the request body", http.StatusBadRequest)
		return
	}
	idempotent := retryable && body == nil && idempotentMethod(r.Method)
	pause := proxyRetryMin
	final := 0 // the tries after the hold ran out on a dropped request
	for {
		pt := &proxyTarget{leader: o.Leader, term: o.Token, url: target, idempotent: idempotent}
		req := r.WithContext(context.WithValue(ctx, proxyTargetKey{}, pt))
		if body != nil {
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		p.rp.ServeHTTP(w, req)
		if pt.retry == nil {
			return // answered, or failed otherwise (502)
		}
		// Refused, or dropped before any answer: nothing was written to w.
		// Hold the request until a leader (the same or the next one)
		// answers, or the hold runs out.
		for {
			if final > 0 || !retryable || !p.pause(ctx, min(pause, time.Until(deadline))) {
				if final < proxyFinalTries && retryable && !isRefused(pt.retry) && ctx.Err() == nil {
					// The hold ran out on a request dropped mid-flight: a
					// few more tries tell a leader that is gone (refused,
					// or none named: 503) from one that keeps dropping
					// requests (502).
					if final > 0 && !p.pause(ctx, proxyRetryMax) {
						p.fail(w, r, pt.leader, pt.retry)
						return
					}
					final++
					if o = p.current(); o.Leader != "" {
						if target, err = leaderURL(leaderAddress(o)); err == nil {
							break
						}
					}
					p.refusedAnswer(w, r, o, pt.retry, retryable)
					return
				}
				if isRefused(pt.retry) {
					p.refusedAnswer(w, r, o, pt.retry, retryable)
				} else {
					p.fail(w, r, pt.leader, pt.retry)
				}
				return
			}
			pause = min(2*pause, proxyRetryMax)
			if o = p.current(); o.Leader == "" {
				o = p.awaitLeader(ctx, deadline)
			}
			if target, err = leaderURL(leaderAddress(o)); err == nil {
				break
			}
		}
	}
}

// pause waits d, or less if the leader changes meanwhile (the next try
// then goes to the new one at once), and reports false instead when d is
// not positive or the request or the server ends first.
func (p *leaderProxy) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	select {
	case <-time.After(d): // collected once it fires or is dropped (Go 1.23)
		return true
	case <-p.changes():
		return true
	case <-ctx.Done():
		return false
	case <-p.upgraded.Done(): // shutting down: answer held requests now
		return false
	}
}

// awaitLeader waits until a leader is known, the deadline passes, or the
// request or the server ends, and returns the last observation: one with
// a leader, or with none if the wait ended otherwise. A request that comes
// during a handoff, between the release and the election of the next
// leader, so waits for the next leader instead of getting a 503.
func (p *leaderProxy) awaitLeader(ctx context.Context, deadline time.Time) leadership.Status {
	for {
		changed := p.changes() // before reading, so that no change is missed
		o := p.current()
		d := time.Until(deadline)
		if o.Leader != "" || d <= 0 {
			return o
		}
		select {
		case <-changed:
		case <-time.After(min(d, proxyRetryMax)): // the leader is also read every 100ms
		case <-ctx.Done():
			return o
		case <-p.upgraded.Done(): // shutting down: answer held requests now
			return o
		}
	}
}

// changes returns a channel closed at the next change of leader.
func (p *leaderProxy) changes() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// leaderChanged wakes the requests waiting for a leader (the proxy's loop
// calls it for each observation of its follower, which current already
// returns).
func (p *leaderProxy) leaderChanged() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.changed)
	p.changed = make(chan struct{})
}

// noTarget is the 503 message for an observation o with no usable leader
// address (err says why).
func (p *leaderProxy) noTarget(o leadership.Status, err error) string {
	if o.Leader == "" {
		if p.hold > 0 {
			return fmt.Sprintf("no leader for key %q within %v (--hold)", p.key, p.hold)
		}
		return fmt.Sprintf("no leader for key %q", p.key)
	}
	return fmt.Sprintf("the leader of key %q, %q, is not an address: %v", p.key, leaderAddress(o), err)
}

// refusedAnswer answers a request that no leader accepted: 503 with
// Retry-After (nothing was sent, so the client can safely retry). o is
// the last leader seen, refused the connection error of the last try.
func (p *leaderProxy) refusedAnswer(w http.ResponseWriter, r *http.Request, o leadership.Status, refused error, retryable bool) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	var msg string
	switch _, err := leaderURL(leaderAddress(o)); {
	case err != nil:
		msg = p.noTarget(o, err)
	case !retryable:
		msg = fmt.Sprintf("the leader of key %q, %s, refused the connection (the request was not held: its body is chunked or over 64 KiB)", p.key, o.Leader)
	default:
		msg = fmt.Sprintf("the leader of key %q, %s, refused the connection for %v (--hold)", p.key, o.Leader, p.hold)
	}
	p.failures.printf("%s %s: 503: %s (last try: %v)", r.Method, r.URL.Path, msg, refused)
	unavailable(w, msg)
}

// retryBody reads the request's body into memory when it is small enough
// to be sent again, and reports whether the request can be retried: it
// has no body, or one of known length up to proxyMaxRetryBody.
func retryBody(r *http.Request) (body []byte, retryable bool, err error) {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return nil, true, nil
	case r.ContentLength < 0 || r.ContentLength > proxyMaxRetryBody:
		return nil, false, nil
	}
	body = make([]byte, r.ContentLength)
	if _, err := io.ReadFull(r.Body, body); err != nil {
		return nil, false, err
	}
	return body, true, nil
}

// isRefused reports whether err is a refused connection to the leader:
// nothing listens at its address (yet).
func isRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && errors.Is(err, syscall.ECONNREFUSED)
}

// isDropped reports whether err is a connection to the leader that broke
// before any answer: reset, or closed (net/http reports a connection the
// server closed before the request was written with an unexported error,
// "http: server closed idle connection", new connections included).
func isDropped(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

// idempotentMethod reports whether a request with this method may be sent
// twice (RFC 9110, section 9.2.2), for the methods a proxy sends again
// without asking: those that are also safe.
func idempotentMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// unavailable answers 503 with a Retry-After and msg as the body.
func unavailable(w http.ResponseWriter, msg string) {
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(proxyRetryAfter))
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = fmt.Fprintln(w, "leadership proxy: "+msg)
}

// badGateway answers 502 when the leader cannot be reached or fails. A
// failure that can be retried (see proxyTarget.retry) is not answered
// here: it is marked on the request's target, for ServeHTTP to hold the
// request.
func (p *leaderProxy) badGateway(w http.ResponseWriter, r *http.Request, err error) {
	target, _ := r.Context().Value(proxyTargetKey{}).(*proxyTarget)
	if target != nil && r.Context().Err() == nil && (isRefused(err) || target.idempotent && isDropped(err)) {
		target.retry = err
		return
	}
	leader := "?"
	if target != nil {
		leader = target.leader
	}
	p.fail(w, r, leader, err)
}

// fail answers 502: the leader failed to answer with err.
func (p *leaderProxy) fail(w http.ResponseWriter, r *http.Request, leader string, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		w.WriteHeader(http.StatusBadGateway) // the client went away
		return
	}
	p.failures.printf("%s %s: 502: leader %s did not answer: %v", r.Method, r.URL.Path, leader, err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadGateway)
	_, _ = fmt.Fprintf(w, "leadership proxy: the leader of key %q, %s, did not answer\n", p.key, leader)
}

// proxyHealth is the body of the health endpoint.
type proxyHealth struct {
	Leader string `json:"leader"`
	// Address is where requests go: the URL the leader's address turns
	// into, or, when it is not an address (ready false), the value as the
	// leader published it; "" when there is no leader.
	Address string `json:"address"`
	Term    uint64 `json:"term"`
	Ready   bool   `json:"ready"`
}

// health answers the health endpoint: 200 when requests can be forwarded.
func (p *leaderProxy) health(w http.ResponseWriter, o leadership.Status) {
	address := leaderAddress(o)
	u, err := leaderURL(address)
	if err == nil {
		address = u.String()
	}
	ready := o.Leader != "" && err == nil
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if ready {
		w.WriteHeader(http.StatusOK)
	} else {
		w.Header().Set("Retry-After", strconv.Itoa(proxyRetryAfter))
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(proxyHealth{Leader: o.Leader, Address: address, Term: o.Token, Ready: ready})
}

// closeUpgraded ends every upgraded connection (at shutdown).
func (p *leaderProxy) closeUpgraded() { p.cancel() }

// Close ends upgraded connections and closes idle connections to leaders,
// and logs how many failures the rate limit left out.
func (p *leaderProxy) Close() {
	p.cancel()
	p.transport.CloseIdleConnections()
	p.failures.flush()
}

// rateLimitedLog writes at most one line per interval to a logger: lines
// that come sooner are left out and counted, and the count is added to the
// next line written (or written by flush).
type rateLimitedLog struct {
	log     *logger
	every   time.Duration
	mu      sync.Mutex
	next    time.Time // no line before then
	dropped int       // lines left out since the last one written
}

// printf writes a line, unless one was written less than every ago.
func (l *rateLimitedLog) printf(format string, a ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Before(l.next) {
		l.dropped++
		l.mu.Unlock()
		return
	}
	l.next = now.Add(l.every)
	dropped := l.dropped
	l.dropped = 0
	l.mu.Unlock()
	msg := fmt.Sprintf(format, a...)
	if dropped > 0 {
		msg += fmt.Sprintf(" (and %d more failed requests not logged)", dropped)
	}
	l.log.printf("%s", msg)
}

// Write logs p as one line under the rate limit (for log.Logger).
func (l *rateLimitedLog) Write(p []byte) (int, error) {
	l.printf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// flush writes the count of lines left out, if any.
func (l *rateLimitedLog) flush() {
	l.mu.Lock()
	dropped := l.dropped
	l.dropped = 0
	l.mu.Unlock()
	if dropped > 0 {
		l.log.printf("%d more failed requests not logged", dropped)
	}
}

// leaderURL turns a leader's name into the URL requests are forwarded to:
// "host:port" is http://host:port; an http:// or https:// URL is used as
// it is.
func leaderURL(name string) (*url.URL, error) {
	if name == "" {
		return nil, errors.New("no leader")
	}
	if strings.Contains(name, "://") {
		u, err := url.Parse(name)
		switch {
		case err != nil:
			return nil, err
		case u.Scheme != "http" && u.Scheme != "https":
			return nil, fmt.Errorf("scheme %q is not http or https", u.Scheme)
		case u.Host == "" || u.Hostname() == "":
			return nil, errors.New("no host in the URL")
		case u.User != nil:
			return nil, errors.New("user information in the URL")
		}
		u.RawQuery, u.Fragment = "", ""
		return u, nil
	}
	host, port, err := net.SplitHostPort(name)
	if err != nil {
		return nil, errors.New("want host:port or an http(s) URL")
	}
	if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
		return nil, errors.New("want host:port with a host and a port from 1 to 65535")
	}
	return &url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)}, nil
}
