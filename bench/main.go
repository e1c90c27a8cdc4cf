// Command bench measures this library's elections on every store, side by
// side with etcd's own concurrency.Election, in one run on the same
// servers: resign handoff, follower update, crash takeover and the store
// requests of an idle election. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/leadership-go/leadership/store/open"
)

var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)

// electionName is the pseudo-backend of etcd's own concurrency.Election.
const electionName = "etcd-election"

// backend is one store to measure, named as in --backends.
type backend struct {
	name   string
	url    string
	scheme string
}

// known are the backends with a flag and an environment variable, in the
// order they run.
var known = []struct {
	name, env, scheme string
}{
	{"memory", "", "memory"},
	{"etcd", "LEADERSHIP_ETCD", "etcd"},
	{"redis", "LEADERSHIP_REDIS", "redis"},
	{"postgres", "LEADERSHIP_POSTGRES", "postgres"},
	{"consul", "LEADERSHIP_CONSUL", "consul"},
	{"zk", "LEADERSHIP_ZK", "zk"},
	{"k8s", kubeNamespaceEnv, "k8s"}, // with $LEADERSHIP_KUBECONFIG_ADMIN: kubeURL
}

// config is the run's settings, from the flags.
type config struct {
	cpuProfile    string        // --cpuprofile
	cpuProfileFor time.Duration // --cpuprofile-for
	backends      []*backend
	election      *backend // etcd's concurrency.Election on this etcd, or nil
	rounds        int
	crashRounds   int
	idle          time.Duration
	idleLongTTL   time.Duration
	ttl           time.Duration
	holdoff       time.Duration
	jsonFile      string
	quick         bool
	clientLogs    bool
	processes     bool // cross-process mode: every participant a child process
	passes        int  // --passes: the cross-process rounds split into this many passes over every row
	scale         scaleConfig
	runID         string
	command       string
}

// key returns the election key of one phase on one backend, unique to the
// run.
func (c *config) key(be *backend, what string) string { return c.prefix(be.name, what) }

func (c *config) prefix(name, what string) string {
	return "leadership-bench/" + c.runID + "/" + name + "/" + what
}

// defaultURL returns the URL a known backend gets from its environment
// variable, "" when unset.
func defaultURL(name, env, scheme string) string {
	switch name {
	case "memory":
		return "memory://leadership-bench"
	case "k8s":
		return kubeURL()
	}
	v := strings.TrimSpace(os.Getenv(env))
	if v == "" {
		return ""
	}
	if !strings.Contains(v, "://") {
		v = scheme + "://" + v
	}
	if scheme == "postgres" && !strings.Contains(v, "table=") {
		if strings.Contains(v, "?") {
			v += "&table=bench_kv"
		} else {
			v += "?table=bench_kv"
		}
	}
	return v
}

// storeFlags collects --store NAME=URL.
type storeFlags [][2]string

func (s *storeFlags) String() string { return "" }
func (s *storeFlags) Set(v string) error {
	name, url, ok := strings.Cut(v, "=")
	if !ok || name == "" || !strings.Contains(url, "://") {
		return errors.New("want NAME=URL, as in etcd3=etcd://127.0.0.1:23311,127.0.0.1:23312")
	}
	*s = append(*s, [2]string{name, url})
	return nil
}

func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	backends := fs.String("backends", "", "comma-separated `names` to run: memory, etcd, redis, postgres, consul, zk, k8s, "+electionName+
		", and names given with --store (default: memory, every backend whose URL is set, and "+electionName+" when etcd is)")
	fs.IntVar(&cfg.rounds, "rounds", 50, "handoff `rounds` per backend")
	fs.IntVar(&cfg.crashRounds, "crash-rounds", 5, "crash takeover `rounds` per backend")
	fs.DurationVar(&cfg.idle, "idle", 20*time.Second, "idle counting `window` (0 skips the idle measurement)")
	fs.DurationVar(&cfg.idleLongTTL, "idle-long-ttl", 15*time.Second, "the second, long `TTL` of the idle measurement")
	fs.DurationVar(&cfg.ttl, "ttl", 2*time.Second, "lease `TTL` of the handoff, crash and first idle elections (etcd sessions: rounded up to seconds)")
	fs.DurationVar(&cfg.holdoff, "holdoff", 250*time.Millisecond, "resign holdoff of the handoff candidates (Timings.ResignHoldoff); it lapses untimed between rounds")
	fs.StringVar(&cfg.jsonFile, "json", "", "also write the raw numbers to `FILE` as JSON")
	fs.BoolVar(&cfg.quick, "quick", false, "smoke run: --rounds 10 --crash-rounds 1 --idle 5s unless given")
	fs.BoolVar(&cfg.processes, "processes", false, "cross-process mode: every candidate, follower and etcd Election participant in its own process (linux); handoff by Stop, crash by SIGKILL, no idle measurement")
	fs.IntVar(&cfg.passes, "passes", 1, "with --processes: split the rounds into `N` passes, each over every row in turn, so that every row is measured throughout the run (a machine whose load drifts then weighs on every row alike)")
	fs.IntVar(&cfg.scale.elections, "scale", 0, "scale mode: run `N` concurrent elections (two candidates and a follower each) on one client per backend, and nothing else")
	fs.DurationVar(&cfg.scale.ttl, "scale-ttl", 30*time.Second, "lease `TTL` of the --scale elections")
	fs.DurationVar(&cfg.scale.idle, "scale-idle", time.Minute, "idle counting `window` of the --scale run")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of the run's first --cpuprofile-for to `FILE`")
	fs.DurationVar(&cfg.cpuProfileFor, "cpuprofile-for", 2*time.Minute, "how long --cpuprofile profiles")
	fs.BoolVar(&cfg.clientLogs, "client-logs", false, "keep the store clients' own log lines on stderr (reconnect failures of vanished clients, mostly)")
	urls := map[string]*string{}
	for _, k := range known {
		help := "`URL` of the " + k.name + " store"
		switch {
		case k.name == "k8s":
			help += " (default k8s://$" + kubeNamespaceEnv + "?kubeconfig=$" + kubeKubeconfigEnv + ")"
		case k.env != "":
			help += " (default from $" + k.env + ")"
		}
		urls[k.name] = fs.String(k.name+"-url", defaultURL(k.name, k.env, k.scheme), help)
	}
	var extra storeFlags
	fs.Var(&extra, "store", "an extra backend `NAME=URL` (repeatable), for instance etcd3=etcd://h1:2379,h2:2379")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["rounds"] {
			cfg.rounds = 10
		}
		if !set["crash-rounds"] {
			cfg.crashRounds = 1
		}
		if !set["idle"] {
			cfg.idle = 5 * time.Second
		}
	}
	switch {
	case cfg.processes && !procsSupported:
		return nil, errors.New("--processes: needs linux (a clock shared by processes, children that die with the parent)")
	case cfg.scale.elections < 0:
		return nil, fmt.Errorf("--scale %d: want 0 or more", cfg.scale.elections)
	case cfg.passes < 1:
		return nil, fmt.Errorf("--passes %d: want at least 1", cfg.passes)
	case cfg.passes > 1 && !cfg.processes:
		return nil, errors.New("--passes: only with --processes")
	case cfg.passes > cfg.rounds:
		return nil, fmt.Errorf("--passes %d: more than the %d rounds", cfg.passes, cfg.rounds)
	case cfg.scale.elections > 0 && cfg.processes:
		return nil, errors.New("--scale and --processes: choose one")
	case cfg.scale.ttl < 100*time.Millisecond || cfg.scale.ttl > 5*time.Minute:
		return nil, fmt.Errorf("--scale-ttl %v: want 100ms to 5m", cfg.scale.ttl)
	case cfg.scale.idle < 0:
		return nil, fmt.Errorf("--scale-idle %v: want 0 or more", cfg.scale.idle)
	case cfg.rounds < 1:
		return nil, fmt.Errorf("--rounds %d: want at least 1", cfg.rounds)
	case cfg.crashRounds < 0:
		return nil, fmt.Errorf("--crash-rounds %d: want 0 or more", cfg.crashRounds)
	case cfg.idle < 0:
		return nil, fmt.Errorf("--idle %v: want 0 or more", cfg.idle)
	case cfg.ttl < 100*time.Millisecond || cfg.ttl > time.Minute:
		return nil, fmt.Errorf("--ttl %v: want 100ms to 1m", cfg.ttl)
	case cfg.idleLongTTL < 100*time.Millisecond || cfg.idleLongTTL > 5*time.Minute:
		return nil, fmt.Errorf("--idle-long-ttl %v: want 100ms to 5m", cfg.idleLongTTL)
	case cfg.holdoff < 0 || cfg.holdoff > cfg.ttl:
		return nil, fmt.Errorf("--holdoff %v: want 0 to the TTL", cfg.holdoff)
	}

	// Every backend that has a URL, in order.
	var all []*backend
	for _, k := range known {
		if u := strings.TrimSpace(*urls[k.name]); u != "" {
			all = append(all, &backend{name: k.name, url: u})
		}
	}
	for _, e := range extra {
		if slices.ContainsFunc(all, func(b *backend) bool { return b.name == e[0] }) || e[0] == electionName {
			return nil, fmt.Errorf("--store %s: the name is taken", e[0])
		}
		all = append(all, &backend{name: e[0], url: e[1]})
	}
	for _, b := range all {
		scheme, _, _ := strings.Cut(b.url, "://")
		b.scheme = strings.ToLower(scheme)
	}
	etcd := func() *backend {
		for _, b := range all {
			if b.name == "etcd" {
				return b
			}
		}
		return nil
	}
	if *backends == "" {
		cfg.backends = all
		cfg.election = etcd()
	} else {
		for _, name := range strings.Split(*backends, ",") {
			name = strings.TrimSpace(name)
			switch {
			case name == "":
				continue
			case name == electionName:
				if cfg.election = etcd(); cfg.election == nil {
					return nil, fmt.Errorf("--backends %s: no etcd URL (set LEADERSHIP_ETCD or --etcd-url)", name)
				}
				continue
			}
			i := slices.IndexFunc(all, func(b *backend) bool { return b.name == name })
			if i < 0 {
				if slices.ContainsFunc(known[:], func(k struct{ name, env, scheme string }) bool { return k.name == name }) {
					return nil, fmt.Errorf("--backends %s: no URL (set its environment variable or --%s-url)", name, name)
				}
				return nil, fmt.Errorf("--backends %s: unknown (memory, etcd, redis, postgres, consul, zk, k8s, %s, or a --store name)", name, electionName)
			}
			if !slices.Contains(cfg.backends, all[i]) {
				cfg.backends = append(cfg.backends, all[i])
			}
		}
	}
	if len(cfg.backends) == 0 && cfg.election == nil {
		return nil, errors.New("no backend to run")
	}
	cfg.runID = fmt.Sprintf("%s-%d", time.Now().UTC().Format("20060102T150405"), os.Getpid())
	cfg.command = commandLine(args)
	return cfg, nil
}

// commandLine reconstructs how the program was started.
func commandLine(args []string) string {
	prog := os.Args[0]
	if strings.Contains(prog, "go-build") {
		prog = "go -C bench run ."
	}
	parts := []string{prog}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$&;|<>*?()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// maskURL hides passwords.
func maskURL(raw string) string {
	if s, err := open.Parse(raw); err == nil {
		return s.String()
	}
	return raw
}

// progress writes a progress line to stderr.
func progress(format string, a ...any) {
	fmt.Fprintf(stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
}

func main() {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(childMain(spec)) // a participant of --processes
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cfg, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	if !cfg.clientLogs {
		// kvtools backends log through the standard logger, go-redis
		// through its own: after a vanish they report every failed
		// reconnection, which is expected here.
		log.SetOutput(io.Discard)
		goredis.SetLogger(quietLogger{})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.cpuProfile != "" {
		if err := profileCPU(ctx, cfg.cpuProfile, cfg.cpuProfileFor); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
	}
	baseline := runtime.NumGoroutine()
	if cfg.scale.elections > 0 {
		cfg.scale.rounds, cfg.scale.parallel = cfg.rounds, 64
		code := runScale(ctx, cfg, &cfg.scale, stdout)
		if n := settleGoroutines(baseline); n > baseline {
			fmt.Fprintf(stderr, "bench: %d goroutines still running at the end (%d at the start)\n", n, baseline)
			if ours, _ := leftovers(); len(ours) > 0 {
				_ = pprof.Lookup("goroutine").WriteTo(stderr, 1)
				code = 1
			}
		}
		return code
	}
	var rep *report
	if cfg.processes {
		rep = measureProcs(ctx, cfg)
	} else {
		rep = measure(ctx, cfg)
	}
	rep.GoroutinesStart = baseline
	rep.GoroutinesEnd = settleGoroutines(baseline)
	if rep.GoroutinesEnd > baseline {
		rep.LeftOurs, rep.LeftTheirs = leftovers()
	}
	printReport(stdout, cfg, rep)
	if cfg.jsonFile != "" {
		if err := writeJSON(cfg.jsonFile, rep); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 1
		}
	}
	failed := ctx.Err() != nil
	for _, r := range rep.Backends {
		if len(r.Errors) > 0 {
			failed = true
		}
	}
	if rep.GoroutinesEnd > baseline {
		fmt.Fprintf(stderr, "bench: %d goroutines still running at the end (%d at the start):\n", rep.GoroutinesEnd, baseline)
		_ = pprof.Lookup("goroutine").WriteTo(stderr, 1)
		if len(rep.LeftOurs) > 0 {
			failed = true
		}
	}
	if failed {
		return 1
	}
	return 0
}

// leftovers describes the goroutines still running besides main and the
// signal handling, by their top function: those running code of this
// module (a failure of the bench or the library), and those only in
// third-party client libraries (which the bench cannot stop).
func leftovers() (ours, theirs map[string]int) {
	var stacks strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&stacks, 2) // as runtime.Stack(buf, true) with a large enough buf
	ours, theirs = map[string]int{}, map[string]int{}
	for i, g := range strings.Split(stacks.String(), "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		if i == 0 || len(lines) < 2 || strings.Contains(g, "os/signal.") {
			continue // this goroutine, or signal handling
		}
		top := lines[1]
		if j := strings.LastIndexByte(top, '('); j > 0 {
			top = top[:j]
		}
		if strings.Contains(g, "leadership-go/leadership") || strings.Contains(g, "\nmain.") {
			ours[top]++
		} else {
			theirs[top]++
		}
	}
	return ours, theirs
}

// quietLogger drops go-redis's log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// settleGoroutines waits a moment for goroutines that are ending (client
// libraries finish some in the background) and returns how many remain.
func settleGoroutines(baseline int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// measure runs every phase on every backend that opens.
func measure(ctx context.Context, cfg *config) *report {
	rep := &report{Started: time.Now(), Machine: machine(), Command: cfg.command}
	rep.LoadBefore = loadAvg()
	rep.Config = reportConfig{TTL: cfg.ttl.String(), Rounds: cfg.rounds, CrashRounds: cfg.crashRounds,
		Idle: cfg.idle.String(), IdleLongTTL: cfg.idleLongTTL.String(), Holdoff: cfg.holdoff.String(), RunID: cfg.runID}

	// Open each backend once: one that does not open is skipped.
	var live []*backend
	for _, be := range cfg.backends {
		if err := probe(ctx, be); err != nil {
			line := fmt.Sprintf("skip %s (%s): %v", be.name, maskURL(be.url), err)
			progress("%s", line)
			rep.Skipped = append(rep.Skipped, line)
			if be.name == "etcd" && cfg.election == be {
				cfg.election = nil
				rep.Skipped = append(rep.Skipped, "skip "+electionName+": etcd did not open")
			}
			continue
		}
		live = append(live, be)
	}
	if cfg.election != nil && !slices.Contains(live, cfg.election) {
		if err := probe(ctx, cfg.election); err != nil {
			line := fmt.Sprintf("skip %s (%s): %v", electionName, maskURL(cfg.election.url), err)
			progress("%s", line)
			rep.Skipped = append(rep.Skipped, line)
			cfg.election = nil
		}
	}

	results := map[*backend]*backendResult{}
	runElectionRow := func() {
		if cfg.election == nil || ctx.Err() != nil {
			return
		}
		r := &backendResult{Name: "etcd concurrency.Election", URL: maskURL(cfg.election.url), Kind: "etcd-election"}
		rep.Backends = append(rep.Backends, r)
		progress("%s: handoff %d rounds, crash %d rounds", electionName, cfg.rounds, cfg.crashRounds)
		res, err := runElection(ctx, cfg.election, cfg)
		r.Election = res
		if err != nil {
			r.Errors = append(r.Errors, err.Error())
			progress("%s: error: %v", electionName, err)
		}
	}
	electionDone := false
	for _, be := range live {
		if ctx.Err() != nil {
			break
		}
		r := &backendResult{Name: be.name, URL: maskURL(be.url), Kind: "library"}
		results[be] = r
		rep.Backends = append(rep.Backends, r)
		progress("%s: handoff, %d rounds", be.name, cfg.rounds)
		h, err := runHandoff(ctx, be, cfg)
		r.Handoff = h
		r.fail("handoff", err)
		if cfg.crashRounds > 0 && ctx.Err() == nil {
			progress("%s: crash takeover, %d rounds", be.name, cfg.crashRounds)
			c, err := runCrash(ctx, be, cfg)
			r.Crash = c
			r.fail("crash", err)
		}
		if be == cfg.election {
			runElectionRow()
			electionDone = true
		}
	}
	if !electionDone {
		runElectionRow()
	}
	if cfg.idle > 0 && len(live) > 0 && ctx.Err() == nil {
		measureIdle(ctx, cfg, live, results)
	}
	rep.LoadAfter = loadAvg()
	rep.Finished = time.Now()
	evaluate(cfg, rep)
	return rep
}

// fail records err, unless it is nil, as the error of the part what of r's
// run: in r.Errors and on a progress line.
func (r *backendResult) fail(what string, err error) {
	if err != nil {
		r.Errors = append(r.Errors, what+": "+err.Error())
		progress("%s: %s error: %v", r.Name, what, err)
	}
}

// probe opens a backend once and closes it.
func probe(ctx context.Context, be *backend) error {
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	s, err := open.Store(octx, be.url)
	if err != nil {
		return err
	}
	return withTimeout("closing the probe client", closeTimeout, func() { _ = s.Close() })
}

// measureIdle counts the requests of idle elections on every backend at
// once (the two TTLs side by side): an idle election makes a few requests a
// second, so they do not disturb one another, and the window is spent once.
func measureIdle(ctx context.Context, cfg *config, live []*backend, results map[*backend]*backendResult) {
	type item struct {
		be   *backend
		long bool
		run  *idleRun
	}
	var items []item
	defer func() {
		for _, it := range items {
			if it.run == nil {
				continue
			}
			if err := it.run.g.teardown(); err != nil {
				results[it.be].Errors = append(results[it.be].Errors, "idle teardown: "+err.Error())
			}
		}
	}()
	progress("idle: starting idle elections (TTL %v and %v) on %d backends", cfg.ttl, cfg.idleLongTTL, len(live))
	for _, be := range live {
		for _, long := range []bool{false, true} {
			ttl := cfg.ttl
			if long {
				ttl = cfg.idleLongTTL
			}
			r, err := startIdle(ctx, be, cfg, ttl)
			items = append(items, item{be, long, r})
			if err != nil {
				results[be].fail(fmt.Sprintf("idle TTL %v", ttl), err)
				items[len(items)-1].run = nil
				_ = r.g.teardown()
			}
		}
	}
	// Let every waiter settle (first read, watch opened) before counting.
	if sleep(ctx, time.Second) != nil {
		return
	}
	for _, it := range items {
		if it.run != nil {
			it.run.begin()
		}
	}
	progress("idle: counting for %v", cfg.idle)
	start := time.Now()
	if sleep(ctx, cfg.idle) != nil {
		return
	}
	window := time.Since(start)
	for _, it := range items {
		if it.run == nil {
			continue
		}
		res := it.run.end(window)
		if it.long {
			results[it.be].IdleLong = res
		} else {
			results[it.be].IdleShort = res
		}
	}
}

// profileCPU profiles the CPU for d (or until ctx ends) into path, in a
// goroutine of its own: a run too slow to finish still leaves its profile.
func profileCPU(ctx context.Context, path string, d time.Duration) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	go func() {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		pprof.StopCPUProfile()
		f.Close()
	}()
	return nil
}
