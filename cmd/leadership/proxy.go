package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
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

  - no leader, or a name that is not an address: 503 with "Retry-After: 1"
    and a one-line text body;
  - the leader does not answer: 502;
  - responses are streamed (flushed as they come), and Upgrade requests
    (WebSocket and others) are passed through;
  - X-Forwarded-For, X-Forwarded-Host and X-Forwarded-Proto are set (those
    the client sent are replaced); the Host header is the leader's;
  - GET --health-path answers {"leader":"...","term":N,"ready":true} with 200
    when a leader with a usable address is known, ready false and 503
    otherwise; it is never proxied.

SIGINT or SIGTERM stops accepting connections and waits up to
--shutdown-timeout for requests in flight (upgraded connections are closed),
then exits 0. If the election is ended, the proxy shuts down the same way and
exits with 4. Leader changes are logged on stderr.` + storeAbout

// proxyConfig holds the proxy's flags.
type proxyConfig struct {
	electionFlags
	listen          string
	healthPath      string
	shutdownTimeout time.Duration
}

// proxyCommand describes the proxy subcommand.
func proxyCommand() *command {
	return &command{
		name:    "proxy",
		args:    "--store URL --key KEY --listen ADDR [--health-path PATH]",
		summary: "HTTP reverse proxy to whichever process leads (names are addresses)",
		about:   proxyAbout,
		exits:   endedExit,
		setup: func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
			var cfg proxyConfig
			cfg.add(fs)
			fs.StringVar(&cfg.listen, "listen", "", "listen on `ADDR` (host:port, such as :8080 or 127.0.0.1:0), required")
			fs.StringVar(&cfg.healthPath, "health-path", proxyDefaultHealthPath, "serve the proxy's own health at `PATH` (not proxied)")
			fs.DurationVar(&cfg.shutdownTimeout, "shutdown-timeout", proxyDefaultShutdown, "on SIGINT/SIGTERM, wait this `DURATION` for requests in flight")
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
	f, errs, stop, err := cfg.follow(ctx)
	if err != nil {
		return err
	}
	defer stop()
	lg := &logger{w: s.stderr, prefix: "leadership proxy: "}

	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	p := newLeaderProxy(f.Current, cfg.key, cfg.healthPath, lg)
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
	obs := f.Observations()
loop:
	for {
		select {
		case <-ctx.Done():
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
func leaderAddress(o leadership.Observation) string {
	if o.Value != "" {
		return o.Value
	}
	return o.Leader
}

// logLeader logs a leader change seen by the proxy's follower.
func logLeader(lg *logger, o leadership.Observation) {
	addr := leaderAddress(o)
	switch _, err := leaderURL(addr); {
	case o.Leader == "":
		lg.printf("no leader (last term %d): answering 503", o.Term)
	case err != nil:
		lg.printf("leader is %q (term %d), %q is not an address: answering 503", o.Leader, o.Term, addr)
	case addr != o.Leader:
		lg.printf("leader is %s (term %d) at %s", o.Leader, o.Term, addr)
	default:
		lg.printf("leader is %s (term %d)", o.Leader, o.Term)
	}
}

// leaderProxy is the proxy's handler: it forwards every request to the
// leader its current function names at the time of the request.
type leaderProxy struct {
	current    func() leadership.Observation
	key        string
	healthPath string
	log        *logger
	transport  *http.Transport
	rp         *httputil.ReverseProxy

	upgraded context.Context // ends when the server shuts down
	cancel   context.CancelFunc
}

// proxyTarget is what a request is forwarded to, carried in its context
// from ServeHTTP to the reverse proxy's hooks.
type proxyTarget struct {
	leader string
	term   uint64
	url    *url.URL
}

type proxyTargetKey struct{}

// newLeaderProxy returns a proxy to the leader current names. Close it to
// drop its idle connections.
func newLeaderProxy(current func() leadership.Observation, key, healthPath string, lg *logger) *leaderProxy {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // the leader is reached directly, whatever HTTP_PROXY says
	t.DialContext = (&net.Dialer{Timeout: proxyDialTimeout, KeepAlive: 30 * time.Second}).DialContext
	p := &leaderProxy{current: current, key: key, healthPath: healthPath, log: lg, transport: t}
	p.upgraded, p.cancel = context.WithCancel(context.Background())
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			target := pr.In.Context().Value(proxyTargetKey{}).(*proxyTarget)
			pr.SetURL(target.url)
			pr.SetXForwarded()
		},
		Transport:     t,
		FlushInterval: -1, // flush every write: streams pass through as they come
		ErrorLog:      log.New(lg, "", 0),
		ErrorHandler:  p.badGateway,
	}
	return p
}

// ServeHTTP answers the health path itself and forwards everything else
// to the leader, or answers 503 when there is none.
func (p *leaderProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o := p.current()
	target, err := leaderURL(leaderAddress(o))
	if r.URL.Path == p.healthPath {
		p.health(w, o, err == nil)
		return
	}
	if err != nil {
		msg := fmt.Sprintf("no leader for key %q", p.key)
		if o.Leader != "" {
			msg = fmt.Sprintf("the leader of key %q, %q, is not an address: %v", p.key, leaderAddress(o), err)
		}
		unavailable(w, msg)
		return
	}
	ctx := context.WithValue(r.Context(), proxyTargetKey{}, &proxyTarget{leader: o.Leader, term: o.Term, url: target})
	if r.Header.Get("Upgrade") != "" {
		// An upgraded connection lives until one side closes it; end it
		// when the server shuts down (Shutdown does not track hijacked
		// connections).
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(p.upgraded, cancel)()
	}
	p.rp.ServeHTTP(w, r.WithContext(ctx))
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

// badGateway answers 502 when the leader cannot be reached or fails.
func (p *leaderProxy) badGateway(w http.ResponseWriter, r *http.Request, err error) {
	target, _ := r.Context().Value(proxyTargetKey{}).(*proxyTarget)
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		w.WriteHeader(http.StatusBadGateway) // the client went away
		return
	}
	leader := "?"
	if target != nil {
		leader = target.leader
	}
	p.log.printf("%s %s: leader %s did not answer: %v", r.Method, r.URL.Path, leader, err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadGateway)
	_, _ = fmt.Fprintf(w, "leadership proxy: the leader of key %q, %s, did not answer\n", p.key, leader)
}

// proxyHealth is the body of the health endpoint.
type proxyHealth struct {
	Leader string `json:"leader"`
	Term   uint64 `json:"term"`
	Ready  bool   `json:"ready"`
}

// health answers the health endpoint: 200 when requests can be forwarded.
func (p *leaderProxy) health(w http.ResponseWriter, o leadership.Observation, usable bool) {
	ready := o.Leader != "" && usable
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if ready {
		w.WriteHeader(http.StatusOK)
	} else {
		w.Header().Set("Retry-After", strconv.Itoa(proxyRetryAfter))
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(proxyHealth{Leader: o.Leader, Term: o.Term, Ready: ready})
}

// closeUpgraded ends every upgraded connection (at shutdown).
func (p *leaderProxy) closeUpgraded() { p.cancel() }

// Close ends upgraded connections and closes idle connections to leaders.
func (p *leaderProxy) Close() {
	p.cancel()
	p.transport.CloseIdleConnections()
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
