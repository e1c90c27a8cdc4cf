package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/memory"
)

// node is one candidate of the demo with its own store handle and HTTP
// server.
type node struct {
	name     string // node-i, the label the demo shows
	addr     string // its HTTP server's address: its name in the election
	srv      *http.Server
	handle   *memory.Store
	cand     *leadership.Candidate
	vanished bool // its handle and server were closed in phase 3
}

// demo is one run of the demo.
type demo struct {
	cfg     Config
	out     io.Writer
	rec     *recorder
	limit   time.Duration // every awaited event must happen this long after the start
	store   string        // the memory backend's name
	nodes   []*node
	fHandle *memory.Store
	fol     *leadership.Follower
	labels  map[string]string // a candidate's name (address) -> its node label
	proxy   Proxy
	pSrv    *http.Server
	pURL    string         // the proxy's base URL
	client  *http.Client   // requests through the proxy
	quit    chan struct{}  // closed by shutdown
	wg      sync.WaitGroup // the goroutines that read channels, serve or probe
	printed int            // events up to this index have been shown
	stopped bool
}

// storeSeq keeps the names of the demo's stores unique within the process.
var storeSeq atomic.Int64

// Run validates cfg, runs the four phases of the demo and writes the
// narration to out. It returns a *ConfigError for bad settings, a
// *MissingEventError when an expected event does not happen within
// 10 x TTL + 10s, and a *ViolationError when a guarantee is seen broken.
// Everything it started is stopped when it returns.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	d := &demo{
		cfg:    cfg,
		out:    out,
		rec:    newRecorder(),
		limit:  10*cfg.TTL + 10*time.Second,
		store:  fmt.Sprintf("leadership-demo-%d-%d", os.Getpid(), storeSeq.Add(1)),
		labels: make(map[string]string),
		client: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		quit:   make(chan struct{}),
	}
	ctx, cancel := context.WithDeadline(ctx, d.rec.start.Add(d.limit))
	defer cancel()
	defer d.shutdown()

	d.printf("Demo: %d candidates on key %q, TTL %s, embedded store %q.\n", cfg.Candidates, cfg.Key, ShortDuration(cfg.TTL), d.store)
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
	var t times
	winner, err := d.phaseElection(ctx, &t)
	if err != nil {
		return err
	}
	next, err := d.phaseResign(ctx, winner, &t)
	if err != nil {
		return err
	}
	if err := d.phaseVanish(ctx, next, &t); err != nil {
		return err
	}
	d.phaseStop(&t)
	d.summary(&t)
	return nil
}

// start starts every candidate's HTTP server, the follower, the proxy and
// every candidate, each on its own store handle, and the goroutines that
// record what their channels deliver.
func (d *demo) start() error {
	if err := d.startNodeServers(); err != nil {
		return err
	}
	h, err := memory.Open(context.Background(), memory.Config{Name: d.store})
	if err != nil {
		return fmt.Errorf("open the embedded store: %w", err)
	}
	d.fHandle = h
	d.fol = leadership.NewFollower(h, d.cfg.Key)
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

	if err := d.startProxy(); err != nil {
		return err
	}
	for _, n := range d.nodes {
		if n.handle, err = memory.Open(context.Background(), memory.Config{Name: d.store}); err != nil {
			return fmt.Errorf("open the embedded store for %s: %w", n.name, err)
		}
		n.cand = leadership.NewCandidate(n.handle, d.cfg.Key, n.addr, d.cfg.TTL)
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

// recordElected records what a candidate's elected channel delivers until
// it closes. On true it also records the term's fencing token and, when
// the term's context ends, the step-down.
func (d *demo) recordElected(n *node, elected <-chan bool) {
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

// label returns the node label of a candidate's name, "" for "".
func (d *demo) label(name string) string {
	if l, ok := d.labels[name]; ok {
		return l
	}
	return name
}

// node returns the demo node called name.
func (d *demo) node(name string) *node {
	for _, n := range d.nodes {
		if n.name == name {
			return n
		}
	}
	return nil
}

// shutdown stops every candidate (those that do not lead first, so that no
// new election starts) and the follower, closes the servers and the proxy,
// waits for the recording goroutines and closes every store handle. It
// runs once.
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
	d.closeServers()
	d.client.CloseIdleConnections()
	d.wg.Wait()
	for _, n := range d.nodes {
		if n.handle != nil {
			_ = n.handle.Close()
		}
	}
	if d.fHandle != nil {
		_ = d.fHandle.Close()
	}
}
