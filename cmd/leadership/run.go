package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership"
	lstore "github.com/leadership-go/leadership/store"
)

// Defaults and limits of run.
const (
	runDefaultTTL = 15 * time.Second
	// runMaxGrace caps the default grace period.
	runMaxGrace = 5 * time.Second

	// The backoff of --restart: the first campaign after COMMAND exited by
	// itself starts restartMinDelay after the exit, and each consecutive
	// one waits twice as long as the last, up to restartMaxDelay. A COMMAND
	// that ran for restartResetAfter or longer starts the sequence again.
	restartMinDelay   = 500 * time.Millisecond
	restartMaxDelay   = 30 * time.Second
	restartResetAfter = time.Minute
)

const runAbout = `
Campaigns for the election at --key as --name (by default HOST_PID: the host name and the process id)
and runs COMMAND while it leads, like 'consul lock' or 'etcdctl elect': at
most one COMMAND runs at any instant across every 'leadership run' of the
key.

When elected, run starts COMMAND with stdin, stdout and stderr passed
through and these variables added to its environment:
  LEADERSHIP_TOKEN         the term's fencing token (only grows; give it to
                           what COMMAND writes to, to refuse stale leaders)
  LEADERSHIP_LEADER        --name
  LEADERSHIP_KEY           --key (also the --key of a leadership command
                           that COMMAND runs)
  LEADERSHIP_TERM_STARTED  when the term began, RFC 3339 (UTC)

When leadership ends (lost, or the lease could not be renewed in time),
run sends SIGTERM to COMMAND's process group, then SIGKILL after --grace,
and campaigns again: COMMAND starts anew at the next term won.

Safety rule: the term ends at its last renewal + TTL - margin, where
margin = grace + TTL/10; other candidates can take over only at last
renewal + TTL. So COMMAND is dead TTL/10 before anyone else can be elected,
which covers clocks whose rates differ by up to 10% (docs/semantics.md).
The margin must be under TTL/2: with a long --grace, raise --ttl.
The lease is renewed every (TTL - margin)/3.

When COMMAND exits by itself while leading, run releases leadership at
once and exits with COMMAND's exit status (128+N if a signal N ended it).
With --restart it releases leadership and campaigns again instead, after a
backoff: 500ms after the first exit, doubling at each consecutive exit up
to 30s; a COMMAND that ran for a minute or more resets it to 500ms. Other
candidates can take over meanwhile.

With --try D, run gives up if it is not elected within D of its start
(like 'consul lock -try'): it stops campaigning, leaving the election as it
was, and exits with 6. Once elected, --try no longer applies.
On SIGINT or SIGTERM, run stops COMMAND (SIGTERM, SIGKILL after --grace),
releases leadership at once (the next candidate takes over without waiting
for the TTL) and exits 0. A second signal kills run at once.

COMMAND runs in its own process group, so it cannot read a terminal; when
it ends, whatever is left in its group is killed. If run itself is killed
(SIGKILL), the kernel kills COMMAND (parent-death signal); processes that
COMMAND started are not covered by that: use exec in wrapper scripts.
Elections, losses and COMMAND's start and stop are logged on stderr.` + storeAbout

const runExits = endedExit + `  6  --try: not elected within the time given
  127  COMMAND could not be found or started
  otherwise, when COMMAND exits by itself while leading: COMMAND's exit
  status (128+N if signal N ended it)
`

// runConfig holds run's flags and command.
type runConfig struct {
	electionFlags
	name    string
	ttl     time.Duration
	grace   optionalDuration
	startup time.Duration // --startup-wait
	value   string        // --value
	restart bool
	try     time.Duration // --try: give up when not elected within it; 0: never
	argv    []string      // COMMAND ARGS...
}

// optionalDuration is a duration flag that knows whether it was set, so
// that its default can depend on other flags and 0 remains a value.
type optionalDuration struct {
	d   time.Duration
	set bool
}

func (o *optionalDuration) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.d.String()
}

func (o *optionalDuration) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return errors.New("negative duration")
	}
	o.d, o.set = d, true
	return nil
}

// runCommand describes the run subcommand.
func runCommand() *command {
	return &command{
		name:    "run",
		args:    "--store URL --key KEY [--name NAME] [--ttl 15s] [--grace D] [--try D] [--restart] -- COMMAND [ARGS...]",
		summary: "run COMMAND while this process leads (like consul lock)",
		about:   runAbout,
		exits:   runExits,
		setup: func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
			var cfg runConfig
			cfg.add(fs)
			fs.StringVar(&cfg.name, "name", "", "this candidate's `NAME` (default: HOST_PID, the host name and the process id): one word, no spaces; what followers and the proxy see (an address such as 10.0.0.5:8080 for leadership proxy)")
			durationFlag(fs, &cfg.ttl, "ttl", runDefaultTTL, "lease `DURATION`: another candidate takes over at most this long after this one vanished")
			fs.Var(&cfg.grace, "grace", "wait this `DURATION` between SIGTERM and SIGKILL when stopping COMMAND (default min(TTL/4, 5s))")
			durationFlag(fs, &cfg.startup, "startup-wait", 0, "lead no sooner than this `DURATION` after the first read of the election, so that a store that lost its data cannot give two leaders; set it to the largest --ttl of the election (default 0: no wait)")
			fs.StringVar(&cfg.value, "value", "", "publish `VALUE` beside the name while leading (an address such as 10.0.0.5:8080: followers see it, and leadership proxy routes to it instead of the name)")
			fs.BoolVar(&cfg.restart, "restart", false, "when COMMAND exits by itself while leading, release leadership and campaign again instead of exiting, after a backoff (500ms doubling to 30s; reset when COMMAND ran for a minute)")
			durationFlag(fs, &cfg.try, "try", 0, "give up when not elected within `DURATION` of the start, exiting with 6 (like consul lock -try; default 0: campaign for ever)")
			return func(ctx context.Context, args []string, s streams) error {
				cfg.argv = args
				if cfg.name == "" {
					cfg.name = defaultName()
				}
				if err := cfg.validate(); err != nil {
					return err
				}
				return runRun(ctx, cfg, s)
			}
		},
	}
}

// graceD is the grace period: --grace, or min(TTL/4, 5s).
func (c *runConfig) graceD() time.Duration {
	if c.grace.set {
		return c.grace.d
	}
	return min(c.ttl/4, runMaxGrace)
}

// slack is what the safety margin adds to the grace period: COMMAND is
// killed this long before anyone else could be elected, for SIGKILL and the
// kernel to end it and for the drift between this machine's clock rate and
// the others' (up to 10%: docs/semantics.md, section 1).
func (c *runConfig) slack() time.Duration { return c.ttl / 10 }

// margin is the safety margin: the term ends this long before anyone else
// could be elected, leaving the grace period and the slack to stop COMMAND.
func (c *runConfig) margin() time.Duration { return c.graceD() + c.slack() }

// validate checks run's flags and command.
func (c *runConfig) validate() error {
	if err := c.electionFlags.validate(); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(c.name) == "":
		return usageErrorf("--name is required: the host name is unknown (set --name or LEADERSHIP_NAME: the name followers see, as in --name 10.0.0.5:8080)")
	case c.name == "-" || strings.IndexFunc(c.name, badNameRune) >= 0:
		return usageErrorf("--name %q: a name is one word that is not \"-\" (no spaces or control characters): follow and status print it as one field of \"TIME LEADER TERM\"", c.name)
	case c.ttl < leadership.MinTTL || c.ttl > leadership.MaxTTL:
		return usageErrorf("--ttl %v: must be between %v and %v", c.ttl, leadership.MinTTL, leadership.MaxTTL)
	case c.try < 0:
		return usageErrorf("--try %v: must not be negative", c.try)
	case c.startup < 0:
		return usageErrorf("--startup-wait %v: must not be negative", c.startup)
	case len(c.argv) == 0:
		return usageErrorf("missing COMMAND: leadership run [flags] -- COMMAND [ARGS...]")
	case c.margin() >= c.ttl/2:
		return usageErrorf("--grace %v leaves no safe margin: grace + %v (TTL/10) must be under half the --ttl %v; lower --grace or raise --ttl",
			c.graceD(), c.slack(), c.ttl)
	}
	return nil
}

// runRun campaigns and runs the child while leading, until ctx ends, the
// child exits by itself, the election is ended, or --try runs out.
func runRun(ctx context.Context, cfg runConfig, s streams) error {
	lg := &logger{w: s.stderr, prefix: "leadership run: " + cfg.name + ": "}
	if childSysProcAttr() == nil {
		return signalGroup(0, syscall.SIGTERM) // not supported here
	}
	if !hasParentDeathSignal {
		lg.printf("warning: this system has no parent-death signal: if run is killed with SIGKILL, COMMAND keeps running")
	}
	path, err := exec.LookPath(cfg.argv[0])
	if err != nil {
		return &exitError{code: exitNoExec, err: fmt.Errorf("COMMAND %q: %w", cfg.argv[0], err)}
	}
	var kv store.Store
	defer func() {
		if kv != nil {
			_ = kv.Close()
		}
	}()

	margin := cfg.margin()
	// cand is the current candidacy, nil while --restart backs off; elected
	// and errs are its channels.
	var (
		cand    *leadership.Candidate
		elected <-chan bool
		errs    <-chan error
	)
	campaign := func() error {
		c := leadership.NewCandidate(kv, cfg.key, cfg.name, cfg.ttl,
			leadership.WithTimings(leadership.Timings{
				SafetyMargin: margin,
				Renew:        (cfg.ttl - margin) / 3,
				StartupWait:  cfg.startup,
			}),
			leadership.WithValue(cfg.value))
		el, er, err := c.RunForElection()
		if err != nil {
			return startError(err)
		}
		cand, elected, errs = c, el, er
		return nil
	}
	// withdraw stops the candidacy, releasing leadership if it leads.
	withdraw := func() {
		if cand != nil {
			cand.Stop()
			cand, elected, errs = nil, nil, nil
		}
	}
	// The store is opened, and the first campaign started, until the store
	// answers: one that cannot be reached yet (at boot) is retried.
	start := func() error {
		if kv == nil {
			k, err := cfg.open(ctx)
			if err != nil {
				return err
			}
			kv = k
		}
		return campaign()
	}
	if err := startUntilRead(ctx, start, cfg.try, lg); err != nil {
		return err
	}
	defer memoryNotice(s.stderr, cfg.store, false)()
	defer withdraw()
	lg.printf("campaigning for key %q on %s (TTL %v, grace %v, margin %v)", cfg.key, cfg.redacted(), cfg.ttl, cfg.graceD(), margin)

	// tryC fires when --try runs out; nil once elected.
	var tryC <-chan time.Time
	if cfg.try > 0 {
		t := time.NewTimer(cfg.try)
		defer t.Stop()
		tryC = t.C
	}
	// backoffC fires when --restart has backed off long enough.
	var backoffC <-chan time.Time
	var backoff restartBackoff

	r := &runner{cfg: cfg, path: path, s: s, log: lg}
	if _, ok := s.stderr.(*os.File); !ok {
		r.childStderr = lg // keep the child's lines whole among the log's
	} else {
		r.childStderr = s.stderr
	}
	var child *childProc
	// startIfLeading starts the child if there is none and this candidate
	// leads a term that is not over.
	startIfLeading := func() error {
		if child != nil || cand == nil {
			return nil
		}
		term, ok := cand.CurrentTerm()
		if !ok || term.Context().Err() != nil {
			return nil
		}
		c, err := r.start(term)
		if err != nil {
			return &exitError{code: exitNoExec, err: fmt.Errorf("cannot start COMMAND: %w", err)}
		}
		child = c
		return nil
	}
	// stopChild stops the child, if any, and waits until it is gone.
	stopChild := func(why string) {
		if child != nil {
			child.stop(why)
			<-child.done
			r.logExit(child)
			child = nil
		}
	}
	var childDone <-chan struct{}
	var leading uint64 // the token of the term this candidate leads, 0 if none
	for {
		childDone = nil
		if child != nil {
			childDone = child.done
		}
		select {
		case <-ctx.Done():
			stopChild("run was asked to stop")
			withdraw()
			lg.printf("released leadership; exiting")
			return nil

		case <-tryC:
			if _, ok := cand.CurrentTerm(); ok || cand == nil {
				tryC = nil // elected just now: the news is on its way
				continue
			}
			withdraw()
			return &exitError{code: exitNotElected, err: fmt.Errorf("not elected within --try %v: gave up campaigning", cfg.try)}

		case <-backoffC:
			backoffC = nil
			if err := campaign(); err != nil {
				return err
			}
			lg.printf("campaigning again (--restart)")

		case v, ok := <-elected:
			if !ok {
				stopChild("the election ended")
				<-cand.Done()
				if errors.Is(cand.Err(), leadership.ErrElectionEnded) {
					return endedError(cfg.key)
				}
				return errors.New("the candidate stopped")
			}
			if v {
				tryC = nil
				if term, ok := cand.CurrentTerm(); ok {
					leading = term.Token
					lg.printf("elected, token %d", term.Token)
				}
				if err := startIfLeading(); err != nil {
					withdraw()
					return err
				}
			} else if leading != 0 {
				lg.printf("leadership of token %d ended", leading)
				leading = 0
			}

		case err, ok := <-errs:
			if ok && leading == 0 && refused(err) {
				// Retrying will not give it the right: say so and exit 1,
				// as a refusal at start does. A leader keeps trying: its
				// term ends at its deadline if its renewals stay refused.
				withdraw()
				return fmt.Errorf("the store refused this candidate: %w", err)
			}
			errs = lg.storeError(errs, err, ok)

		case <-childDone:
			c := child
			child = nil
			r.logExit(c)
			if c.stopped() || c.term.Context().Err() != nil {
				// Stopped because its term ended: lead again to run it again.
				if err := startIfLeading(); err != nil {
					withdraw()
					return err
				}
				continue
			}
			if cfg.restart {
				withdraw()
				leading = 0
				d := backoff.delay(time.Since(c.started))
				lg.printf("COMMAND exited by itself while leading: released leadership; campaigning again (--restart) in %v", d)
				backoffC = time.After(d)
				continue
			}
			withdraw()
			code := c.exitCode()
			lg.printf("COMMAND exited by itself while leading: released leadership; exiting with status %d", code)
			if code == 0 {
				return nil
			}
			return &exitError{code: code}
		}
	}
}

// restartBackoff is the backoff of --restart: restartMinDelay, doubled at
// each consecutive quick exit up to restartMaxDelay, back to
// restartMinDelay after a COMMAND that ran for restartResetAfter.
type restartBackoff struct{ next time.Duration }

// delay returns how long to wait before campaigning again after a
// COMMAND that ran for ran.
func (b *restartBackoff) delay(ran time.Duration) time.Duration {
	if b.next == 0 || ran >= restartResetAfter {
		b.next = restartMinDelay
	}
	d := b.next
	b.next = min(2*b.next, restartMaxDelay)
	return d
}

// startUntilRead calls start (a campaign, a follower's start) until the
// store answers its first read: a store that is slow or restarting when
// the command starts is retried (backing off from 500ms to 5s, each
// failure logged), not a reason to exit. When ctx ends (SIGINT or
// SIGTERM) before the store answered, it returns stoppedBeforeStart (exit
// 0, as the command stopped so once started); after try, if positive, it
// gives up (exit 6, as run --try); other errors (a refused password, a
// missing right) end it at once.
func startUntilRead(ctx context.Context, start func() error, try time.Duration, lg *logger) error {
	var giveUp <-chan time.Time
	if try > 0 {
		t := time.NewTimer(try)
		defer t.Stop()
		giveUp = t.C
	}
	delay := 500 * time.Millisecond
	for {
		err := start()
		if err != nil && ctx.Err() != nil {
			// Stopped while opening (the open's error is the stop's).
			return stoppedBeforeStart(lg)
		}
		if err == nil || !transient(err) {
			return err
		}
		lg.printf("%v (retrying in %v)", err, delay)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return stoppedBeforeStart(lg)
		case <-giveUp:
			t.Stop()
			return &exitError{code: exitNotElected, err: fmt.Errorf("not elected within --try %v: the store did not answer (%w)", try, err)}
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// stoppedBeforeStart logs that the command was stopped before its store
// answered and returns the error that makes it exit 0 with nothing more
// printed: a supervisor stopping a service that never reached its store
// records no failure (docs/cli.md, Exit codes).
func stoppedBeforeStart(lg *logger) error {
	lg.printf("stopped before the store answered")
	return &exitError{code: exitOK}
}

// transient reports whether err, from a start (opening the store, or the
// first read), is the store not answering (unreachable, or no answer in
// time) rather than refusing.
func transient(err error) bool {
	var ue *usageError
	if errors.As(err, &ue) {
		return false
	}
	return errors.Is(err, store.ErrNotReachable) ||
		errors.Is(err, leadership.ErrStore) && errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, errOpenTimeout)
}

// refused reports whether err is the store refusing this client (a wrong
// password or token, a missing right), which retrying does not fix: every
// adapter's errors of those kinds match store.ErrAuth or
// store.ErrPermission.
func refused(err error) bool {
	return errors.Is(err, lstore.ErrAuth) || errors.Is(err, lstore.ErrPermission)
}

// badNameRune reports whether r may not be in a candidate's name: space
// and control characters would break the one-line, space-separated output
// of follow and status (and the proxy's log lines).
func badNameRune(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// defaultName is run's name without --name: the host name and the process
// id, joined by an underscore (which no host name contains), so that two
// runs on one host are told apart in logs, follow and status.
func defaultName() string {
	host, _ := os.Hostname()
	if host == "" {
		return "" // refused by validate: --name is then required
	}
	return fmt.Sprintf("%s_%d", host, os.Getpid())
}
