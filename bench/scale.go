package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/workpool"
	"github.com/leadership-go/leadership/store/open"
)

// The --scale mode: N concurrent elections, each with two candidates and a
// follower, all on one store handle (one client) per backend.

// scaleConfig is what the --scale flags set.
type scaleConfig struct {
	elections int
	ttl       time.Duration
	idle      time.Duration
	rounds    int
	parallel  int // RunForElection calls made at once while starting
}

// scaleResult is one backend's figures.
type scaleResult struct {
	Name              string           `json:"name"`
	Elections         int              `json:"elections"`
	Participants      int              `json:"participants"`
	TTL               string           `json:"ttl"`
	StartSeconds      float64          `json:"start_s"`   // first start -> every candidate and follower running
	LeadersSeconds    float64          `json:"leaders_s"` // first start -> every follower names a leader
	GoroutinesPer     float64          `json:"goroutines_per_election"`
	HeapKiBPer        float64          `json:"heap_kib_per_election"`
	GoroutinesIdle    float64          `json:"goroutines_per_election_after_idle,omitempty"` // the same counts at the end of the idle window
	HeapKiBIdle       float64          `json:"heap_kib_per_election_after_idle,omitempty"`
	IdleWindow        string           `json:"idle_window"`
	IdlePerMinute     float64          `json:"idle_requests_per_min"`
	IdleByMethod      map[string]int64 `json:"idle_requests_by_method"` // per minute
	IdleChanges       int64            `json:"idle_leader_changes"`     // elected transitions during the idle window
	Server            *serverDelta     `json:"server,omitempty"`        // what the server counted while idle, and its CPU
	ServerNote        string           `json:"server_note,omitempty"`   // why there is no server count
	Handoff           *stats           `json:"handoff"`                 // Resign -> the other candidate elected, others idle
	StopSeconds       float64          `json:"stop_s"`
	Errors            []string         `json:"errors,omitempty"`
	ChannelErrors     int64            `json:"channel_errors"`         // errors the candidates' and followers' error channels reported
	StartupErrors     int64            `json:"startup_channel_errors"` // of which until every follower named a leader
	IdleErrors        int64            `json:"idle_channel_errors"`    // of which during the idle window
	FirstChannelError string           `json:"first_channel_error,omitempty"`
	StartRetries      int64            `json:"start_retries"` // starts that failed and were tried again
	FirstRetryError   string           `json:"first_retry_error,omitempty"`
}

// startTries is how many times the bench starts a participant whose start
// fails before it gives the row up.
const startTries = 3

// scaleElection is one election of the run: two candidates and a follower.
type scaleElection struct {
	cands   [2]*leadership.Candidate
	fol     *leadership.Follower
	elected [2]chan struct{} // a token each time candidate k is elected
	named   atomic.Bool      // the follower has named a leader
}

// scaleRun holds one backend's elections while they run.
type scaleRun struct {
	cfg         *scaleConfig
	elections   []*scaleElection
	transitions atomic.Int64 // elected=true deliveries, all candidates
	namedCount  atomic.Int64
	allNamed    chan struct{}
	readers     sync.WaitGroup
	errCount    atomic.Int64
	firstErr    atomic.Value
}

func (r *scaleRun) noteErr(err error) {
	if r.errCount.Add(1) == 1 {
		r.firstErr.Store(err.Error())
	}
}

// readCandidate drains one candidate's channels (one goroutine each).
func (r *scaleRun) readCandidate(e *scaleElection, k int, elected <-chan bool, errs <-chan error) {
	drain(r, elected, errs, func(v bool) {
		if v {
			r.transitions.Add(1)
			select {
			case e.elected[k] <- struct{}{}:
			default:
			}
		}
	})
}

// readFollower drains the follower's channels.
func (r *scaleRun) readFollower(e *scaleElection, leaders <-chan string, errs <-chan error) {
	drain(r, leaders, errs, func(name string) {
		if name != "" && !e.named.Swap(true) {
			if r.namedCount.Add(1) == int64(len(r.elections)) {
				close(r.allNamed)
			}
		}
	})
}

// drain reads values and errs in one goroutine until both are closed,
// handing each value to onValue and noting each error.
func drain[T any](r *scaleRun, values <-chan T, errs <-chan error, onValue func(T)) {
	r.readers.Go(func() {
		for values != nil || errs != nil {
			select {
			case v, ok := <-values:
				if !ok {
					values = nil
					continue
				}
				onValue(v)
			case err, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				r.noteErr(err)
			}
		}
	})
}

// readersPerElection is how many goroutines of the bench read one
// election's channels; they are not counted as the library's.
const readersPerElection = 3

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// measureScale runs the --scale measurement on one backend.
func measureScale(ctx context.Context, be *backend, sc *scaleConfig, prefix string) *scaleResult {
	res := &scaleResult{Name: be.name, Elections: sc.elections, Participants: 3 * sc.elections, TTL: sc.ttl.String(), IdleWindow: sc.idle.String()}
	fail := func(what string, err error) *scaleResult {
		res.Errors = append(res.Errors, what+": "+err.Error())
		progress("%s: %s: %v", be.name, what, err)
		return res
	}
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	raw, err := open.Store(octx, be.url)
	cancel()
	if err != nil {
		return fail("open", err)
	}
	client := newCounting(raw)
	defer func() {
		if err := withTimeout("closing the client", closeTimeout, func() { _ = raw.Close() }); err != nil {
			res.Errors = append(res.Errors, err.Error())
		}
	}()

	probe, err := newServerProbe(ctx, be)
	if err != nil {
		res.ServerNote = err.Error()
	} else {
		defer probe.close()
	}

	heap0, g0 := heapInUse(), runtime.NumGoroutine()
	r := &scaleRun{cfg: sc, elections: make([]*scaleElection, sc.elections), allNamed: make(chan struct{})}
	newFollower := func(i int) *leadership.Follower {
		return leadership.NewFollower(client, fmt.Sprintf("%s/%d", prefix, i))
	}
	newCandidate := func(i, k int) *leadership.Candidate {
		return leadership.NewCandidate(client, fmt.Sprintf("%s/%d", prefix, i), fmt.Sprintf("e%d-c%d", i, k), sc.ttl, leadership.WithTimings(leadership.Timings{ResignHoldoff: sc.ttl}))
	}
	for i := range r.elections {
		e := &scaleElection{fol: newFollower(i)}
		for k := range e.cands {
			e.cands[k] = newCandidate(i, k)
			e.elected[k] = make(chan struct{}, 1)
		}
		r.elections[i] = e
	}
	defer func() {
		start := time.Now()
		workpool.Each(len(r.elections), sc.parallel, func(i int) {
			e := r.elections[i]
			e.fol.Stop()
			for _, c := range e.cands {
				c.Stop()
			}
		})
		res.StopSeconds = time.Since(start).Seconds()
		r.readers.Wait()
		res.ChannelErrors = r.errCount.Load()
		if s, ok := r.firstErr.Load().(string); ok {
			res.FirstChannelError = s
		}
		progress("%s: stopped %d elections in %.1fs", be.name, sc.elections, res.StopSeconds)
	}()

	progress("%s: starting %d elections (2 candidates and a follower each) on one client", be.name, sc.elections)
	start := time.Now()
	var startErrs, retries atomic.Int64
	var firstStartErr, firstRetryErr atomic.Value
	// A start that fails (its first read timed out while the machine was
	// busy starting the others) is tried again, on a new Candidate or
	// Follower, as a user would, up to startTries times; the retries are
	// counted.
	startRetrying := func(start func() error, renew func()) bool {
		for try := 1; ; try++ {
			err := start()
			switch {
			case err == nil:
				return true
			case try == startTries:
				if startErrs.Add(1) == 1 {
					firstStartErr.Store(err)
				}
				return false
			}
			if retries.Add(1) == 1 {
				firstRetryErr.Store(err)
			}
			renew()
		}
	}
	workpool.Each(len(r.elections), sc.parallel, func(i int) {
		e := r.elections[i]
		followed := startRetrying(func() error {
			leaders, ferrs, err := e.fol.FollowElection()
			context.AfterFunc(ctx, e.fol.Stop)
			if err == nil {
				r.readFollower(e, leaders, ferrs)
			}
			return err
		}, func() { e.fol = newFollower(i) })
		if !followed {
			return
		}
		for k := range e.cands {
			startRetrying(func() error {
				elected, cerrs, err := e.cands[k].RunForElection()
				context.AfterFunc(ctx, e.cands[k].Stop)
				if err == nil {
					r.readCandidate(e, k, elected, cerrs)
				}
				return err
			}, func() { e.cands[k] = newCandidate(i, k) })
		}
	})
	res.StartSeconds = time.Since(start).Seconds()
	res.StartRetries = retries.Load()
	if err, ok := firstRetryErr.Load().(error); ok {
		res.FirstRetryError = err.Error()
	}
	if n := startErrs.Load(); n > 0 {
		return fail("start", fmt.Errorf("%d participants did not start in %d tries; first: %v", n, startTries, firstStartErr.Load()))
	}
	progress("%s: all %d participants started in %.1fs", be.name, res.Participants, res.StartSeconds)
	wait := time.NewTimer(10*sc.ttl + time.Duration(sc.elections)*10*time.Millisecond)
	defer wait.Stop()
	select {
	case <-r.allNamed:
	case <-wait.C:
		return fail("leaders", fmt.Errorf("%d of %d followers named no leader", int64(sc.elections)-r.namedCount.Load(), sc.elections))
	case <-ctx.Done():
		return fail("leaders", ctx.Err())
	}
	res.LeadersSeconds = time.Since(start).Seconds()
	res.StartupErrors = r.errCount.Load()
	progress("%s: every follower names a leader %.1fs after the first start", be.name, res.LeadersSeconds)

	// Memory and goroutines, once every election has a leader.
	heap1, g1 := heapInUse(), runtime.NumGoroutine()
	res.HeapKiBPer = float64(int64(heap1)-int64(heap0)) / 1024 / float64(sc.elections)
	res.GoroutinesPer = float64(g1-g0-readersPerElection*sc.elections-int(client.live.Load())) / float64(sc.elections)

	// Idle: nothing changes; count what the handle sends.
	if sc.idle > 0 {
		s0, serr := probe.sampleOrErr(ctx)
		c0, t0, tr0, e0 := client.snapshot(), time.Now(), r.transitions.Load(), r.errCount.Load()
		select {
		case <-time.After(sc.idle):
		case <-ctx.Done():
			return fail("idle", ctx.Err())
		}
		d, took := client.snapshot().sub(c0), time.Since(t0)
		res.Server, res.ServerNote = probe.window(ctx, s0, serr, took, res.ServerNote)
		// Again at the end of the window: the settled state, without the
		// calls of the start still in flight.
		heap2, g2 := heapInUse(), runtime.NumGoroutine()
		res.HeapKiBIdle = float64(int64(heap2)-int64(heap0)) / 1024 / float64(sc.elections)
		res.GoroutinesIdle = float64(g2-g0-readersPerElection*sc.elections-int(client.live.Load())) / float64(sc.elections)
		res.IdleChanges = r.transitions.Load() - tr0
		res.IdleErrors = r.errCount.Load() - e0
		perMin := func(n int64) float64 { return float64(n) * float64(time.Minute) / float64(took) }
		res.IdlePerMinute = perMin(d.total())
		res.IdleByMethod = map[string]int64{}
		for m, n := range d.byMethod() {
			res.IdleByMethod[m] = int64(perMin(n) + 0.5)
		}
		progress("%s: idle %.0f requests/min over %v (%d leader changes)", be.name, res.IdlePerMinute, sc.idle, res.IdleChanges)
	}

	// Handoffs on distinct elections while the others stay idle.
	var samples []float64
	for i := range min(sc.rounds, sc.elections) {
		e := r.elections[i]
		lead := -1
		for k, c := range e.cands {
			if c.IsLeader() {
				lead = k
			}
		}
		if lead < 0 {
			return fail("handoff", fmt.Errorf("election %d has no leader", i))
		}
		other := 1 - lead
		select { // forget an earlier election of the other candidate
		case <-e.elected[other]:
		default:
		}
		t0 := time.Now()
		e.cands[lead].Resign()
		ms, err := awaitSuccessor(ctx, e.elected[other], t0, sc.ttl, i)
		if err != nil {
			return fail("handoff", err)
		}
		samples = append(samples, ms)
	}
	res.summarizeHandoffs(samples)
	return res
}

// awaitSuccessor waits for the other candidate of election i to be
// elected after the leader resigned at t0, and returns how long it took,
// in milliseconds.
func awaitSuccessor(ctx context.Context, elected <-chan struct{}, t0 time.Time, ttl time.Duration, i int) (float64, error) {
	limit := 3*ttl + 5*time.Second
	select {
	case <-elected:
		return msf(time.Since(t0)), nil
	case <-time.After(limit):
		return 0, fmt.Errorf("election %d: no successor within %v of Resign", i, limit)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// summarizeHandoffs sets the handoff figures from the samples, in ms.
func (r *scaleResult) summarizeHandoffs(samples []float64) {
	r.Handoff = summarize(samples)
	if r.Handoff != nil {
		progress("%s: handoff p50 %s ms over %d rounds", r.Name, fmtMS(r.Handoff.P50), r.Handoff.N)
	}
}

// runScale runs --scale on every backend, one after the other, and prints
// the table.
func runScale(ctx context.Context, cfg *config, sc *scaleConfig, out io.Writer) int {
	var results []*scaleResult
	failed := false
	for _, be := range cfg.backends {
		if ctx.Err() != nil {
			break
		}
		res := measureScale(ctx, be, sc, cfg.key(be, "scale"))
		results = append(results, res)
		if len(res.Errors) > 0 {
			failed = true
		}
		deleteTree(be, cfg.key(be, "scale"))
	}
	if cfg.election != nil && ctx.Err() == nil {
		res := measureScaleElection(ctx, cfg.election, sc, cfg.prefix(electionName, "scale"))
		results = append(results, res)
		if len(res.Errors) > 0 {
			failed = true
		}
		deleteTree(cfg.election, cfg.prefix(electionName, "scale"))
	}
	printScale(out, cfg, sc, results)
	if cfg.jsonFile != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err == nil {
			err = os.WriteFile(cfg.jsonFile, b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
	}
	if failed || ctx.Err() != nil {
		return 1
	}
	return 0
}

func printScale(w io.Writer, cfg *config, sc *scaleConfig, results []*scaleResult) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	m := machine()
	p("## Scale: %d elections on one client per backend\n\n", sc.elections)
	p("- machine: %d CPUs, %s, %s %s; load average %s\n", m.NProc, m.CPU, m.Go, m.OS, loadAvg())
	p("- command: `%s`\n", cfg.command)
	p("- each election: two candidates and a follower (%d participants), TTL %v, resign holdoff one TTL; idle window %v; %d handoffs (Resign, on distinct elections, the others idle)\n\n",
		3*sc.elections, sc.ttl, sc.idle, min(sc.rounds, sc.elections))
	p("| backend | start (all running) s | every follower names a leader s | goroutines per election (led / after idle) | heap KiB per election (led / after idle) | requests/min idle, handle (by method) | requests/min idle, server (by kind) | server CPU s/min idle | leader changes while idle | handoff p50 / p99 ms | stop s | errors |\n")
	p("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		hand := "-"
		if r.Handoff != nil {
			hand = fmtMS(r.Handoff.P50) + " / " + fmtMS(r.Handoff.P99)
		}
		var methods []string
		for _, k := range slices.Sorted(maps.Keys(r.IdleByMethod)) {
			methods = append(methods, fmt.Sprintf("%s %d", k, r.IdleByMethod[k]))
		}
		errs := fmt.Sprintf("%d on the channels (%d while starting, %d while idle)", r.ChannelErrors, r.StartupErrors, r.IdleErrors)
		if r.FirstChannelError != "" {
			errs += " (first: " + r.FirstChannelError + ")"
		}
		if r.StartRetries > 0 {
			errs += fmt.Sprintf("; %d starts failed and were tried again (first: %s)", r.StartRetries, r.FirstRetryError)
		}
		if len(r.Errors) > 0 {
			errs = strings.Join(r.Errors, "; ") + "; " + errs
		}
		handle := fmt.Sprintf("%.0f (%s)", r.IdlePerMinute, strings.Join(methods, ", "))
		if r.IdleByMethod == nil {
			handle = "-"
		}
		server, cpu := "-", "-"
		if r.Server != nil {
			server, cpu = r.Server.String(), r.Server.CPU()
		}
		if r.ServerNote != "" {
			server += " (" + r.ServerNote + ")"
		}
		gor, heap := fmt.Sprintf("%.1f", r.GoroutinesPer), fmt.Sprintf("%.1f", r.HeapKiBPer)
		if r.GoroutinesIdle != 0 || r.HeapKiBIdle != 0 {
			gor += fmt.Sprintf(" / %.1f", r.GoroutinesIdle)
			heap += fmt.Sprintf(" / %.1f", r.HeapKiBIdle)
		}
		p("| %s | %.1f | %.1f | %s | %s | %s | %s | %s | %d | %s | %.1f | %s |\n", r.Name, r.StartSeconds, r.LeadersSeconds,
			gor, heap, handle, server, cpu, r.IdleChanges, hand, r.StopSeconds, errs)
	}
}

// deleteTree removes what a --scale run left under prefix.
func deleteTree(be *backend, prefix string) {
	cleanUp(be, time.Minute, prefix, func(ctx context.Context, s store.Store) error { return s.DeleteTree(ctx, prefix) })
}
