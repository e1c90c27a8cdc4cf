package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/memory"
)

// Defaults and limits of the demo's flags.
const (
	demoDefaultCandidates = 3
	demoDefaultTTL        = 2 * time.Second
	demoDefaultKey        = "demo/leader"
	demoMinCandidates     = 2
	demoMaxCandidates     = 50
	demoMinTTL            = 100 * time.Millisecond
	demoMaxTTL            = time.Minute
)

const demoAbout = `
Runs a small election inside this process, on the embedded in-memory store,
and narrates it. Every candidate (node-1 .. node-N) and one follower has its
own store client, as separate processes would. Each candidate also serves
"hello from node-i" over HTTP on 127.0.0.1, and its address is its name in
the election; a leadership proxy (the proxy command's code, reading the
follower) forwards requests to whoever leads. Times are offsets from the
start of the demo; durations are measured, not computed.

Phases:
  1. First election: which node wins and how fast, every candidate's
     IsLeader, and when the follower names the leader; a few requests
     through the proxy show the leader answering.
  2. Resign: the leader calls Resign(). Shows the time from the call to the
     next leader's elected=true, its fencing token (greater than the last
     one), when the follower names it, and requests now answered by it.
  3. A leader vanishes: the leader's store client and HTTP server are
     closed, as if its process were killed (its candidate is not stopped).
     The dead leader steps down at its own deadline, before the store lets
     anyone else take over one TTL after its last renewal. Shows the
     step-down, the follower reporting no leader then the successor, what
     requests through the proxy get meanwhile (502 while the dead leader is
     still named, 503 while there is none, then the successor's answer),
     the takeover time relative to the vanish and to the TTL, and checks
     that there was at most one leader at any instant.
  4. Stop: every candidate and the follower are stopped, then a summary
     table of the measured times is printed.

The demo takes about one TTL plus a moment. If an expected event does not
happen within 10 x TTL + 10s, it says what is missing and exits with 1.`

// demoConfig holds the demo's flags.
type demoConfig struct {
	candidates int
	ttl        time.Duration
	key        string
}

// demoCommand describes the demo subcommand.
func demoCommand() *command {
	return &command{
		name:    "demo",
		args:    "[--candidates N] [--ttl DURATION] [--key KEY]",
		summary: "watch an election on the embedded store: first leader, resign, vanished leader",
		about:   demoAbout,
		setup: func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
			var cfg demoConfig
			fs.IntVar(&cfg.candidates, "candidates", demoDefaultCandidates,
				fmt.Sprintf("run `N` candidates, %d to %d", demoMinCandidates, demoMaxCandidates))
			fs.DurationVar(&cfg.ttl, "ttl", demoDefaultTTL,
				fmt.Sprintf("lease TTL of every candidate, a `DURATION` from %s to %s", shortDur(demoMinTTL), shortDur(demoMaxTTL)))
			fs.StringVar(&cfg.key, "key", demoDefaultKey, "election `KEY` in the store")
			return func(ctx context.Context, args []string, s streams) error {
				if len(args) > 0 {
					return usageErrorf("unexpected argument %q (demo takes flags only)", args[0])
				}
				if err := cfg.validate(); err != nil {
					return err
				}
				return runDemo(ctx, cfg, s.stdout)
			}
		},
	}
}

// validate checks the flags' values and returns a *usageError naming the
// first bad one.
func (c demoConfig) validate() error {
	switch {
	case c.candidates < demoMinCandidates || c.candidates > demoMaxCandidates:
		return usageErrorf("--candidates %d: must be between %d and %d", c.candidates, demoMinCandidates, demoMaxCandidates)
	case c.ttl < demoMinTTL || c.ttl > demoMaxTTL:
		return usageErrorf("--ttl %s: must be between %s and %s", shortDur(c.ttl), shortDur(demoMinTTL), shortDur(demoMaxTTL))
	case strings.Trim(c.key, "/") == "":
		return usageErrorf("--key %q: must name a key", c.key)
	}
	return nil
}

// eventKind is what a recorded demo event is about.
type eventKind int

const (
	evElected    eventKind = iota // a candidate's elected channel delivered true
	evUnelected                   // a candidate's elected channel delivered false
	evStepDown                    // the context of a candidate's term ended
	evFollower                    // the follower reported a leader ("" for none)
	evStoreError                  // a candidate's or the follower's error channel delivered
	evNote                        // something the demo itself did
	evProxy                       // a request through the proxy got a new kind of answer
)

// event is one timestamped thing that happened during the demo.
type event struct {
	at     time.Duration // since the start of the demo, when it was recorded
	kind   eventKind
	node   string // the candidate, "" for the follower
	leader string // evFollower: the leader reported
	token  uint64 // evElected, evStepDown: the term's fencing token
	text   string // evNote: what was done; evStoreError: the error; evProxy: the answer
}

// recorder collects events from every goroutine of the demo in the order
// they happen, and lets the demo wait for one.
type recorder struct {
	start time.Time

	mu      sync.Mutex
	events  []event
	changed chan struct{} // closed and replaced on every new event
}

// newRecorder returns a recorder whose clock starts now.
func newRecorder() *recorder {
	return &recorder{start: time.Now(), changed: make(chan struct{})}
}

// add timestamps e, records it and returns it as recorded.
func (r *recorder) add(e event) event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.at = time.Since(r.start)
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
	return e
}

// mark returns the index the next event will have.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// between returns a copy of the events with indexes in [from, to); to < 0
// means up to the last one.
func (r *recorder) between(from, to int) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if to < 0 || to > len(r.events) {
		to = len(r.events)
	}
	if from >= to {
		return nil
	}
	return append([]event(nil), r.events[from:to]...)
}

// waitFor returns the first event at index from or later that matches,
// with its index, waiting for it until ctx ends.
func (r *recorder) waitFor(ctx context.Context, from int, match func(event) bool) (event, int, error) {
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if match(r.events[i]) {
				e := r.events[i]
				r.mu.Unlock()
				return e, i, nil
			}
		}
		from = len(r.events)
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return event{}, -1, ctx.Err()
		}
	}
}

// demoNode is one candidate of the demo with its own store client and
// HTTP server.
type demoNode struct {
	name     string // node-i, the label the demo shows
	addr     string // its HTTP server's address: its name in the election
	srv      *http.Server
	handle   *memory.Store
	cand     *leadership.Candidate
	vanished bool // its client and server were closed in phase 3
}

// demo is one run of the demo subcommand.
type demo struct {
	cfg     demoConfig
	out     io.Writer
	rec     *recorder
	limit   time.Duration // every awaited event must happen this long after the start
	store   string        // the memory backend's name
	nodes   []*demoNode
	fHandle *memory.Store
	fol     *leadership.Follower
	labels  map[string]string // a candidate's name (address) -> its node label
	proxy   *leaderProxy
	pSrv    *http.Server
	pURL    string         // the proxy's base URL
	client  *http.Client   // requests through the proxy
	quit    chan struct{}  // closed by shutdown
	wg      sync.WaitGroup // the goroutines that read channels, serve or probe
	printed int            // events up to this index have been shown
	stopped bool
}

// demoTimes are the measured results shown in the summary.
type demoTimes struct {
	first, firstFollower     time.Duration // start -> first elected, start -> follower named it
	handoff, handoffFollower time.Duration // Resign -> next elected, Resign -> follower named it
	stepDown, takeover       time.Duration // vanish -> dead leader's term ended, vanish -> successor elected
	takeoverFollower         time.Duration // vanish -> follower named the successor
	takeoverProxy            time.Duration // vanish -> the successor answered through the proxy
	vanishAnswers            string        // what requests got during the vanish, such as "502 x3, 503 x2"
	stop                     time.Duration // time to stop everything
}

// demoSeq keeps the names of the demo's stores unique within the process.
var demoSeq atomic.Int64

// runDemo runs the four phases of the demo, writing the narration to out.
func runDemo(ctx context.Context, cfg demoConfig, out io.Writer) error {
	d := &demo{
		cfg:    cfg,
		out:    out,
		rec:    newRecorder(),
		limit:  10*cfg.ttl + 10*time.Second,
		store:  fmt.Sprintf("leadership-demo-%d-%d", os.Getpid(), demoSeq.Add(1)),
		labels: make(map[string]string),
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		quit:   make(chan struct{}),
	}
	ctx, cancel := context.WithDeadline(ctx, d.rec.start.Add(d.limit))
	defer cancel()
	defer d.shutdown()

	d.printf("Demo: %d candidates on key %q, TTL %s, embedded store %q.\n", cfg.candidates, cfg.key, shortDur(cfg.ttl), d.store)
	d.printf("Each candidate and the follower has its own store client. [+N ms] = time since start.\n")
	if err := d.start(); err != nil {
		return err
	}
	var addrs []string
	for _, n := range d.nodes {
		addrs = append(addrs, n.name+"="+n.addr)
	}
	d.printf("Candidates are named by their HTTP addresses: %s.\n", strings.Join(addrs, " "))
	d.printf("A proxy at %s forwards requests to the leader.\n", d.pURL)
	var times demoTimes
	winner, err := d.phaseElection(ctx, &times)
	if err != nil {
		return err
	}
	next, err := d.phaseResign(ctx, winner, &times)
	if err != nil {
		return err
	}
	if err := d.phaseVanish(ctx, next, &times); err != nil {
		return err
	}
	d.phaseStop(&times)
	d.summary(&times)
	return nil
}

// printf writes to the demo's output. Write errors are ignored: the demo
// has nowhere else to report them.
func (d *demo) printf(format string, a ...any) {
	_, _ = fmt.Fprintf(d.out, format, a...)
}

// start starts every candidate's HTTP server, the follower, the proxy and
// every candidate, each on its own store handle, and the goroutines that
// record what their channels deliver.
func (d *demo) start() error {
	for i := 1; i <= d.cfg.candidates; i++ {
		n := &demoNode{name: fmt.Sprintf("node-%d", i)}
		hello := "hello from " + n.name
		ln, err := d.serve(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, hello) }, &n.srv)
		if err != nil {
			return fmt.Errorf("start the HTTP server of %s: %w", n.name, err)
		}
		n.addr = ln
		d.labels[n.addr] = n.name
		d.nodes = append(d.nodes, n)
	}
	h, err := memory.Open(d.store)
	if err != nil {
		return fmt.Errorf("open the embedded store: %w", err)
	}
	d.fHandle = h
	d.fol = leadership.NewFollower(h, d.cfg.key)
	leaders, errs, err := d.fol.FollowElection()
	if err != nil {
		return fmt.Errorf("start the follower: %w", err)
	}
	d.wg.Add(2)
	go func() {
		defer d.wg.Done()
		for l := range leaders {
			d.rec.add(event{kind: evFollower, leader: d.label(l)})
		}
	}()
	go d.recordErrors("", errs)

	d.proxy = newLeaderProxy(d.fol.Current, d.cfg.key, proxyDefaultHealthPath, &logger{w: io.Discard})
	addr, err := d.serve(d.proxy.ServeHTTP, &d.pSrv)
	if err != nil {
		return fmt.Errorf("start the proxy: %w", err)
	}
	d.pURL = "http://" + addr

	for _, n := range d.nodes {
		if n.handle, err = memory.Open(d.store); err != nil {
			return fmt.Errorf("open the embedded store for %s: %w", n.name, err)
		}
		n.cand = leadership.NewCandidate(n.handle, d.cfg.key, n.addr, d.cfg.ttl)
		elected, errs, err := n.cand.RunForElection()
		if err != nil {
			return fmt.Errorf("start %s: %w", n.name, err)
		}
		d.wg.Add(2)
		go d.recordElected(n, elected)
		go d.recordErrors(n.name, errs)
	}
	return nil
}

// serve serves h on 127.0.0.1 on a port of the system's choice, sets *srv
// and returns the address.
func (d *demo) serve(h http.HandlerFunc, srv **http.Server) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	*srv = s
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		_ = s.Serve(ln)
	}()
	return ln.Addr().String(), nil
}

// label returns the node label of a candidate's name, "" for "".
func (d *demo) label(name string) string {
	if l, ok := d.labels[name]; ok {
		return l
	}
	return name
}

// get sends one request through the proxy and describes the answer: who
// answered ("" unless a node did) and a short text.
func (d *demo) get(ctx context.Context) (node, text string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.pURL+"/", nil)
	if err != nil {
		return "", err.Error()
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return "", "error: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	msg := strings.TrimSpace(strings.TrimPrefix(string(body), "leadership proxy: "))
	for addr, label := range d.labels {
		msg = strings.ReplaceAll(msg, addr, label)
	}
	switch {
	case resp.StatusCode == http.StatusOK && strings.HasPrefix(msg, "hello from "):
		return strings.TrimPrefix(msg, "hello from "), fmt.Sprintf("200 %q", msg)
	case resp.StatusCode == http.StatusServiceUnavailable:
		return "", fmt.Sprintf("503 (Retry-After: %s): %s", resp.Header.Get("Retry-After"), msg)
	}
	return "", fmt.Sprintf("%d: %s", resp.StatusCode, msg)
}

// viaProxy sends n requests through the proxy, shows who answered and
// checks that it was the leader.
func (d *demo) viaProxy(ctx context.Context, n int, leader string) error {
	var who []string
	ok := true
	for range n {
		node, text := d.get(ctx)
		if node == "" {
			node = text
		}
		ok = ok && node == leader
		who = append(who, node)
	}
	d.note("%d requests via the proxy answered by: %s", n, strings.Join(who, ", "))
	d.flush()
	if !ok {
		return fmt.Errorf("requests through the proxy did not all reach the leader %s", leader)
	}
	d.printf("  => requests follow the leader: OK\n")
	return nil
}

// probe sends requests through the proxy every few milliseconds from the
// vanish of dead until a live node answers, and records every change of
// answer as an evProxy event (node set when a node answered). It counts
// the answers in counts.
func (d *demo) probe(ctx context.Context, dead string, counts map[string]int, order *[]string) {
	defer d.wg.Done()
	every := max(d.cfg.ttl/50, 2*time.Millisecond)
	last := ""
	for {
		node, text := d.get(ctx)
		kind := text
		if i := strings.IndexAny(text, " :"); i > 0 {
			kind = text[:i]
		}
		if node != "" {
			kind = node
		}
		if counts[kind] == 0 {
			*order = append(*order, kind)
		}
		counts[kind]++
		if text != last {
			last = text
			d.rec.add(event{kind: evProxy, node: node, text: text})
		}
		if node != "" && node != dead {
			return
		}
		select {
		case <-time.After(every):
		case <-ctx.Done():
			return
		case <-d.quit:
			return
		}
	}
}

// recordElected records what a candidate's elected channel delivers until
// it closes. On true it also records the term's fencing token and, when
// the term's context ends, the step-down.
func (d *demo) recordElected(n *demoNode, elected <-chan bool) {
	defer d.wg.Done()
	var watched uint64
	for v := range elected {
		if !v {
			d.rec.add(event{kind: evUnelected, node: n.name})
			continue
		}
		term, ok := n.cand.CurrentTerm()
		d.rec.add(event{kind: evElected, node: n.name, token: term.Token})
		if !ok || term.Token == watched {
			continue
		}
		watched = term.Token
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			<-term.Context().Done()
			d.rec.add(event{kind: evStepDown, node: n.name, token: term.Token})
		}()
	}
}

// recordErrors records what an error channel delivers until it closes;
// node is "" for the follower.
func (d *demo) recordErrors(node string, errs <-chan error) {
	defer d.wg.Done()
	for err := range errs {
		d.rec.add(event{kind: evStoreError, node: node, text: err.Error()})
	}
}

// note records and shows something the demo does, and returns its event.
func (d *demo) note(format string, a ...any) event {
	d.flush()
	e := d.rec.add(event{kind: evNote, text: fmt.Sprintf(format, a...)})
	return e
}

// await waits for the first event from index from on that matches. If
// none comes before the demo's deadline, it shows the events so far and
// returns an error saying what is missing.
func (d *demo) await(ctx context.Context, from int, what string, match func(event) bool) (event, int, error) {
	e, i, err := d.rec.waitFor(ctx, from, match)
	if err != nil {
		d.flush()
		if errors.Is(err, context.DeadlineExceeded) {
			return e, i, fmt.Errorf("missing: %s did not happen within %v of the start (10 x TTL + 10s)", what, d.limit)
		}
		return e, i, fmt.Errorf("missing: %s: %w", what, err)
	}
	return e, i, nil
}

// flush shows the recorded events not shown yet, one aligned line each.
// Unelected events and store errors are left out: step-downs show the
// former, and errors are counted at the end.
func (d *demo) flush() {
	events := d.rec.between(d.printed, -1)
	d.printed += len(events)
	for _, e := range events {
		var what string
		switch e.kind {
		case evElected:
			what = fmt.Sprintf("%s elected (elected=true), fencing token %d", e.node, e.token)
		case evStepDown:
			what = fmt.Sprintf("%s stepped down: the context of its term %d is done", e.node, e.token)
		case evFollower:
			if e.leader == "" {
				what = `follower reports no leader ("")`
			} else {
				what = "follower reports leader " + e.leader
			}
		case evNote:
			what = e.text
		case evProxy:
			what = "request via the proxy -> " + e.text
		default:
			continue
		}
		d.printf("  %s  %s\n", stamp(e.at), what)
	}
}

// stamp formats an offset from the start of the demo.
func stamp(at time.Duration) string { return fmt.Sprintf("[+%9s]", ms(at)) }

// ms formats a duration in milliseconds, with one decimal, or three under
// a millisecond so that fast handoffs do not show as zero.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if d < time.Millisecond {
		return fmt.Sprintf("%.3fms", v)
	}
	return fmt.Sprintf("%.1fms", v)
}

// shortDur formats d as time.Duration does, without the zero units it
// leaves at the end ("1m" rather than "1m0s").
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ofTTL formats d as a multiple of the TTL.
func (d *demo) ofTTL(x time.Duration) string {
	return fmt.Sprintf("%.2f x TTL", float64(x)/float64(d.cfg.ttl))
}

// node returns the demo node called name.
func (d *demo) node(name string) *demoNode {
	for _, n := range d.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// electedMatch matches a candidate's elected=true, except from skip.
func electedMatch(skip string) func(event) bool {
	return func(e event) bool { return e.kind == evElected && e.node != skip }
}

// followerMatch matches the follower reporting leader.
func followerMatch(leader string) func(event) bool {
	return func(e event) bool { return e.kind == evFollower && e.leader == leader }
}

// phaseElection waits for the first leader and for the follower to name
// it, and shows every candidate's IsLeader. It returns the winner's event.
func (d *demo) phaseElection(ctx context.Context, t *demoTimes) (event, error) {
	d.printf("\nPhase 1: first election\n")
	won, _, err := d.await(ctx, 0, "a first leader", electedMatch(""))
	if err != nil {
		return won, err
	}
	seen, _, err := d.await(ctx, 0, "the follower naming "+won.node, followerMatch(won.node))
	if err != nil {
		return won, err
	}
	d.flush()
	var views []string
	leaders := 0
	for _, n := range d.nodes {
		is := n.cand.IsLeader()
		if is {
			leaders++
		}
		views = append(views, fmt.Sprintf("%s=%v", n.name, is))
	}
	d.printf("  IsLeader now: %s\n", strings.Join(views, " "))
	if leaders > 1 {
		return won, fmt.Errorf("%d candidates report IsLeader at once", leaders)
	}
	t.first, t.firstFollower = won.at, seen.at
	d.printf("  => %s won %s after the start; the follower named it at %s\n", won.node, ms(won.at), ms(seen.at))
	return won, d.viaProxy(ctx, 3, won.node)
}

// phaseResign makes the leader resign and measures the handoff. It returns
// the next leader's event.
func (d *demo) phaseResign(ctx context.Context, leader event, t *demoTimes) (event, error) {
	d.printf("\nPhase 2: %s resigns\n", leader.node)
	mark := d.rec.mark()
	call := d.note("%s calls Resign()", leader.node)
	d.node(leader.node).cand.Resign()
	next, _, err := d.await(ctx, mark, "a new leader after the resign", electedMatch(""))
	if err != nil {
		return next, err
	}
	seen, _, err := d.await(ctx, mark, "the follower naming "+next.node, followerMatch(next.node))
	if err != nil {
		return next, err
	}
	d.flush()
	if next.token <= leader.token {
		return next, fmt.Errorf("fencing token did not increase: %d after %d", next.token, leader.token)
	}
	t.handoff, t.handoffFollower = next.at-call.at, seen.at-call.at
	d.printf("  => handoff %s from Resign() to %s's elected=true; token %d > %d: OK\n", ms(t.handoff), next.node, next.token, leader.token)
	d.printf("     the follower named %s %s after the Resign() call\n", next.node, ms(t.handoffFollower))
	return next, d.viaProxy(ctx, 3, next.node)
}

// phaseVanish closes the leader's store client and measures its step-down
// and the takeover, checking that the one came before the other.
func (d *demo) phaseVanish(ctx context.Context, leader event, t *demoTimes) error {
	d.printf("\nPhase 3: %s vanishes (its store client and HTTP server are closed; its candidate is not stopped)\n", leader.node)
	dead := d.node(leader.node)
	mark := d.rec.mark()
	gone := d.note("%s's client and server are closed: its lease is no longer renewed", dead.name)
	_ = dead.handle.Close()
	_ = dead.srv.Close()
	dead.vanished = true
	counts, order := map[string]int{}, []string{}
	d.wg.Add(1)
	probing := make(chan struct{})
	go func() {
		defer close(probing)
		d.probe(ctx, dead.name, counts, &order)
	}()
	down, _, err := d.await(ctx, mark, dead.name+" stepping down", func(e event) bool {
		return e.kind == evStepDown && e.node == dead.name && e.token == leader.token
	})
	if err != nil {
		return err
	}
	next, _, err := d.await(ctx, mark, "a successor taking over", electedMatch(dead.name))
	if err != nil {
		return err
	}
	seen, _, err := d.await(ctx, mark, "the follower naming "+next.node, followerMatch(next.node))
	if err != nil {
		return err
	}
	answered, _, err := d.await(ctx, mark, next.node+" answering through the proxy", func(e event) bool {
		return e.kind == evProxy && e.node == next.node
	})
	if err != nil {
		return err
	}
	<-probing
	d.flush()
	t.stepDown, t.takeover, t.takeoverFollower = down.at-gone.at, next.at-gone.at, seen.at-gone.at
	t.takeoverProxy = answered.at - gone.at
	var tally []string
	for _, k := range order {
		tally = append(tally, fmt.Sprintf("%s x%d", k, counts[k]))
	}
	t.vanishAnswers = strings.Join(tally, ", ")
	d.printf("  => %s stepped down %s after the vanish (%s), at its own deadline\n", dead.name, ms(t.stepDown), d.ofTTL(t.stepDown))
	d.printf("     %s took over %s after the vanish (%s, TTL %s), token %d > %d\n", next.node, ms(t.takeover), d.ofTTL(t.takeover), shortDur(d.cfg.ttl), next.token, leader.token)
	d.printf("     requests through the proxy got, in order: %s\n", t.vanishAnswers)
	if next.token <= leader.token {
		return fmt.Errorf("fencing token did not increase: %d after %d", next.token, leader.token)
	}
	if down.at >= next.at {
		d.printf("     at most one leader at any instant: VIOLATED (%s stepped down %s after %s was elected)\n", dead.name, ms(down.at-next.at), next.node)
		return fmt.Errorf("%s was still leader when %s was elected", dead.name, next.node)
	}
	d.printf("     %s stepped down %s before %s was elected\n", dead.name, ms(next.at-down.at), next.node)
	d.printf("  at most one leader at any instant: OK\n")
	return nil
}

// phaseStop stops everything and reports the store errors seen.
func (d *demo) phaseStop(t *demoTimes) {
	d.printf("\nPhase 4: stop every candidate, the follower, the proxy and the servers\n")
	began := time.Now()
	d.shutdown()
	t.stop = time.Since(began)
	d.printf("  stopped %d candidates, the follower, the proxy and the servers in %s\n", len(d.nodes), ms(t.stop))

	counts := make(map[string]int)
	example := make(map[string]string)
	for _, e := range d.rec.between(0, -1) {
		if e.kind == evStoreError {
			counts[e.node]++
			if example[e.node] == "" {
				example[e.node] = e.text
			}
		}
	}
	for _, n := range d.nodes {
		if n.vanished {
			d.printf("  %s (vanished) reported %d store errors, as expected, the first being\n", n.name, counts[n.name])
			d.printf("    %s\n", example[n.name])
			delete(counts, n.name)
		}
	}
	others := 0
	for _, c := range counts {
		others += c
	}
	d.printf("  store errors from the others: %d\n", others)
}

// shutdown stops every candidate (those that do not lead first, so that no
// new election starts) and the follower, waits for the recording
// goroutines and closes every store handle. It runs once.
func (d *demo) shutdown() {
	if d.stopped {
		return
	}
	d.stopped = true
	for _, lead := range []bool{false, true} {
		for _, n := range d.nodes {
			if n.cand != nil && n.cand.IsLeader() == lead {
				n.cand.Stop()
			}
		}
	}
	for _, n := range d.nodes {
		if n.cand != nil {
			n.cand.Stop() // any that changed role meanwhile
		}
	}
	if d.fol != nil {
		d.fol.Stop()
	}
	close(d.quit)
	for _, s := range []*http.Server{d.pSrv} {
		if s != nil {
			_ = s.Close()
		}
	}
	for _, n := range d.nodes {
		if n.srv != nil {
			_ = n.srv.Close()
		}
	}
	if d.proxy != nil {
		d.proxy.Close()
	}
	d.client.CloseIdleConnections()
	d.wg.Wait()
	for _, n := range d.nodes {
		_ = n.handle.Close()
	}
	if d.fHandle != nil {
		_ = d.fHandle.Close()
	}
}

// summary shows the measured times as a table.
func (d *demo) summary(t *demoTimes) {
	d.printf("\nSummary (%d candidates, TTL %s)\n", d.cfg.candidates, shortDur(d.cfg.ttl))
	rows := []struct{ what, value, note string }{
		{"first election (start -> elected)", ms(t.first), ""},
		{"follower named the first leader at", ms(t.firstFollower), ""},
		{"resign handoff (Resign -> next elected)", ms(t.handoff), ""},
		{"follower saw the handoff after", ms(t.handoffFollower), ""},
		{"vanish -> dead leader stepped down", ms(t.stepDown), d.ofTTL(t.stepDown)},
		{"vanish -> takeover (successor elected)", ms(t.takeover), d.ofTTL(t.takeover)},
		{"vanish -> follower named the successor", ms(t.takeoverFollower), d.ofTTL(t.takeoverFollower)},
		{"vanish -> successor answered via proxy", ms(t.takeoverProxy), d.ofTTL(t.takeoverProxy)},
		{"step-down ahead of takeover by", ms(t.takeover - t.stepDown), ""},
		{"stop everything", ms(t.stop), ""},
	}
	for _, r := range rows {
		line := fmt.Sprintf("  %-40s %10s", r.what, r.value)
		if r.note != "" {
			line += "  (" + r.note + ")"
		}
		d.printf("%s\n", line)
	}
}
