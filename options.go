package leadership

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Limits on the TTL. A store may raise the minimum with a method
// MinTTL() time.Duration (see Backend).
const (
	MinTTL = 10 * time.Millisecond
	MaxTTL = 24 * time.Hour
)

// Option tunes a Candidate or a Follower. A follower given an option of
// candidates only (WithValue, WithRelinquishSchedule, or a candidate's field of WithTimings) refuses to
// start with ErrInvalidOption.
type Option func(*config)

// config holds every tunable; zero fields take their defaults in resolve.
type config struct {
	logger             *slog.Logger
	renewInterval      time.Duration
	safetyMargin       time.Duration
	requestTimeout     time.Duration
	retryMin, retryMax time.Duration
	resignHoldoff      time.Duration
	relinquishInterval time.Duration
	relinquishSpec     string
	relinquishSchedule cron.Schedule
	pollInterval       time.Duration
	pollByTTL          bool          // a follower's default poll: while watched, at least every TTL/2 of the record
	watchedPoll        time.Duration // the slow poll while a watch works (observer.nextPoll)
	startupWait        time.Duration
	clock              timeSource
	jitter             func(n time.Duration) time.Duration // test hook: a draw in [0, n), rand.N when nil
	metrics            Metrics
	value              string   // WithValue
	errs               []error  // option errors found while applying options
	candidateOpts      []string // the candidate-only options given, by name
}

// WithLogger sends the engine's log lines to l, each one structured line
// with the key (and a candidate's node): "leadership: elected" (Info, with
// the term), "leadership: stepped down" (Info, with the term and the
// reason, the Reason's String),
// "leadership: store error" (Warn: the first error of an outage, then at
// most one every 10s, with the count so far), "leadership: store
// recovered" (Info, with the count and the outage's length), and warnings
// for a foreign value at the key or a store that went back in time. By
// default nothing is logged, not even on slog's default logger.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// Timings are the engine's timing knobs, given with WithTimings. A zero
// field takes its default; the defaults suit most elections, and each is
// checked against the TTL when the candidate or follower starts.
type Timings struct {
	// Renew is how often a leader rewrites its lease. Default: TTL/3. It
	// must leave room before the deadline (shorter than TTL minus the
	// safety margin). Candidates only.
	Renew time.Duration
	// SafetyMargin is how long before the store could hand the lease to
	// someone else the leader steps down when it cannot confirm its lease:
	// the deadline is the start of the last confirmed renewal + TTL -
	// margin. It covers clock-rate drift and the time the leader's work
	// needs to notice the cancellation. Default: TTL/10; it must be under
	// TTL/2; a negative value asks for no margin at all. Candidates only.
	SafetyMargin time.Duration
	// RequestTimeout bounds every store request. Default: TTL/3, at most
	// 10s, for candidates; 5s for followers.
	RequestTimeout time.Duration
	// RetryMin and RetryMax are the first and the longest wait between
	// retries after a store error; the wait doubles, with jitter, from one
	// to the other. Default: 10ms to 1s (a leader always retries in time
	// for its deadline). Give both or neither.
	RetryMin, RetryMax time.Duration
	// ResignHoldoff is how long a candidate that resigned or relinquished
	// leaves a free election to the others before it competes again; if no
	// one else takes it in that time, the candidate takes it back.
	// Default: TTL/4, between 100ms and 2s; a negative value asks for none.
	// Candidates only.
	ResignHoldoff time.Duration
	// Poll is how often the key is read while the store's watch is not
	// working, so that changes are still seen; while it works, the key is
	// read only once 3 polls pass with neither a read nor a change the
	// watch (or a write of the candidate's own) showed, so that a leader
	// renewing and a watch delivering its renewals cost no reads at all.
	// Default: TTL/3 for candidates, whose reads while the watch works
	// wait half the TTL; 1s for followers, whose reads while the watch
	// works wait 3s or half the TTL of the leader's record, whichever is
	// longer (both longer than a renewal interval).
	Poll time.Duration
	// StartupWait makes a candidate begin its first term no sooner than
	// StartupWait after it first read the election. A store that lost its
	// data (a server restarted without persistence, a wiped or restored
	// data directory) may show the key missing, free or ended while the
	// leader of before, cut off, still acts until its lease ends: a
	// candidate that starts at that moment saw nothing of that leader. Set
	// it to the longest TTL any candidate of the election uses, and a
	// candidate leads only once such a leader's lease has surely ended. The
	// cost is a wait before a new process's first term. Candidates that saw
	// the record before the loss need nothing: they wait out the lost
	// holder's lease by themselves. Default: no wait. Candidates only.
	StartupWait time.Duration
}

// WithTimings sets the timing knobs that t gives (its non-zero fields);
// the others keep their defaults, or what an earlier WithTimings set. A
// follower given a field of candidates only refuses to start
// (ErrInvalidOption).
func WithTimings(t Timings) Option {
	return func(c *config) {
		const name = "WithTimings"
		refuseNegative := func(field string, d time.Duration) {
			if d < 0 {
				c.refuse(name, fmt.Sprintf("%s %v is negative", field, d))
			}
		}
		refuseNegative("Renew", t.Renew)
		refuseNegative("RequestTimeout", t.RequestTimeout)
		refuseNegative("Poll", t.Poll)
		refuseNegative("StartupWait", t.StartupWait)
		if t.RetryMin != 0 || t.RetryMax != 0 {
			if t.RetryMin <= 0 || t.RetryMax < t.RetryMin {
				c.refuse(name, fmt.Sprintf("RetryMin and RetryMax need 0 < min <= max, got %v and %v", t.RetryMin, t.RetryMax))
			}
			c.retryMin, c.retryMax = t.RetryMin, t.RetryMax
		}
		set := func(field string, dst *time.Duration, d time.Duration, candidateOnly bool) {
			if d == 0 {
				return
			}
			if candidateOnly {
				c.candidateOpts = append(c.candidateOpts, name+" "+field)
			}
			*dst = d
		}
		set("Renew", &c.renewInterval, t.Renew, true)
		set("SafetyMargin", &c.safetyMargin, noneIfNegative(t.SafetyMargin), true)
		set("RequestTimeout", &c.requestTimeout, t.RequestTimeout, false)
		set("ResignHoldoff", &c.resignHoldoff, noneIfNegative(t.ResignHoldoff), true)
		set("Poll", &c.pollInterval, t.Poll, false)
		set("StartupWait", &c.startupWait, t.StartupWait, true)
	}
}

// WithRelinquishSchedule makes a leader step down at every time of a
// schedule, so that a waiting candidate wins (drio-ai's RelinquishInterval
// and RelinquishIntervalSpec): "@every d" gives up each term d after it
// began (d is any positive Go duration, such as "@every 90s" or
// "@every 500ms"); a standard five-field cron line such as "0 0 * * *", or a
// descriptor such as "@hourly", gives up a term at the schedule's first time
// after it began. By default a leader never relinquishes.
// Candidates only: a follower given it refuses to start (ErrInvalidOption).
func WithRelinquishSchedule(spec string) Option {
	return candidateOnly("WithRelinquishSchedule", func(c *config) {
		if every, ok := strings.CutPrefix(withoutTimeZone(spec), "@every "); ok {
			d, err := time.ParseDuration(strings.TrimSpace(every))
			switch {
			case err != nil:
				c.errs = append(c.errs, &OptionError{Option: "WithRelinquishSchedule", Reason: fmt.Sprintf("cannot parse %q", spec), Err: err})
			case d <= 0:
				c.refuse("WithRelinquishSchedule", fmt.Sprintf("%q is not a positive interval", spec))
			default:
				c.relinquishSpec, c.relinquishInterval, c.relinquishSchedule = spec, d, nil
			}
			return
		}
		sched, err := cron.ParseStandard(spec)
		if err != nil {
			c.errs = append(c.errs, &OptionError{Option: "WithRelinquishSchedule", Reason: fmt.Sprintf("cannot parse %q", spec), Err: err})
			return
		}
		c.relinquishSpec, c.relinquishInterval, c.relinquishSchedule = spec, 0, sched // resolve refuses one that never fires
	})
}

// withoutTimeZone is spec less a leading CRON_TZ= or TZ= field, which an
// interval does not read.
func withoutTimeZone(spec string) string {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=") {
		if _, rest, ok := strings.Cut(spec, " "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return spec
}

// noneIfNegative maps a negative duration to -1, the config's mark of an
// explicit zero (zero itself means "take the default").
func noneIfNegative(d time.Duration) time.Duration {
	if d < 0 {
		return -1
	}
	return d
}

// candidateOnly returns opt marked as an option of candidates only, under
// name: a follower given it refuses to start.
func candidateOnly(name string, opt Option) Option {
	return func(c *config) {
		c.candidateOpts = append(c.candidateOpts, name)
		opt(c)
	}
}

// notNil returns an option that applies set, or, when v is nil (a typed
// nil pointer included), refuses the option called name.
func notNil(name string, v any, set func(*config)) Option {
	return func(c *config) {
		if isNil(v) {
			c.refuse(name, "the value is nil")
			return
		}
		set(c)
	}
}

// refuse records that option cannot take its value, for the reason given.
func (c *config) refuse(option, reason string) {
	c.errs = append(c.errs, &OptionError{Option: option, Reason: reason})
}

// newConfig applies the options in order.
func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.clock == nil {
		c.clock = systemClock{}
	}
	if c.metrics == nil {
		c.metrics = noMetrics{}
	}
	return c
}

// resolve fills the defaults that depend on the TTL and checks that the
// durations fit together. ttl 0 means a follower (no lease of its own).
func (c *config) resolve(ttl time.Duration) error {
	if c.relinquishSchedule != nil && c.relinquishSchedule.Next(c.clock.Now()).IsZero() {
		c.refuse("WithRelinquishSchedule", fmt.Sprintf("%q never fires", c.relinquishSpec))
	}
	if len(c.errs) > 0 {
		return c.errs[0]
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.retryMin == 0 {
		c.retryMin, c.retryMax = 10*time.Millisecond, time.Second
	}
	if ttl == 0 {
		if len(c.candidateOpts) > 0 {
			return &OptionError{Option: c.candidateOpts[0], Reason: "applies to candidates only, not to a follower"}
		}
		if c.requestTimeout == 0 {
			c.requestTimeout = 5 * time.Second
		}
		if c.pollInterval == 0 {
			c.pollInterval, c.pollByTTL = time.Second, true
		}
		if c.watchedPoll == 0 {
			c.watchedPoll = watchedPollFactor * c.pollInterval
		}
		return nil
	}
	if c.renewInterval == 0 {
		c.renewInterval = ttl / 3
	}
	switch c.safetyMargin {
	case 0:
		c.safetyMargin = ttl / 10
	case -1:
		c.safetyMargin = 0
	}
	if c.requestTimeout == 0 {
		c.requestTimeout = min(ttl/3, 10*time.Second)
	}
	switch c.resignHoldoff {
	case 0:
		c.resignHoldoff = min(max(ttl/4, 100*time.Millisecond), 2*time.Second)
	case -1:
		c.resignHoldoff = 0
	}
	if c.pollInterval == 0 {
		// Half the TTL while a watch works: longer than a renewal
		// interval, and well within the TTL for which DeleteElection
		// leaves the ended record (endNotice).
		c.pollInterval = ttl / 3
		if c.watchedPoll == 0 {
			c.watchedPoll = ttl / 2
		}
	}
	if c.watchedPoll == 0 {
		c.watchedPoll = watchedPollFactor * c.pollInterval
	}
	if c.safetyMargin >= ttl/2 {
		return &OptionError{Option: "WithTimings", Reason: fmt.Sprintf("SafetyMargin %v must be under half the TTL %v", c.safetyMargin, ttl)}
	}
	if c.renewInterval >= ttl-c.safetyMargin {
		return &OptionError{Option: "WithTimings", Reason: fmt.Sprintf("Renew %v leaves no time to renew before the deadline (TTL %v - margin %v)", c.renewInterval, ttl, c.safetyMargin)}
	}
	return nil
}

// checkTTL validates a candidate's TTL against the library's limits and the
// store's own minimum, if it declares one.
func checkTTL(ttl time.Duration, client any) error {
	lo := MinTTL
	if m, ok := client.(minTTLer); ok && m.MinTTL() > lo {
		lo = m.MinTTL()
	}
	if ttl < lo || ttl > MaxTTL {
		return &OptionError{Option: "ttl", Kind: ErrInvalidTTL, Reason: fmt.Sprintf("%v must be between %v and %v", ttl, lo, MaxTTL)}
	}
	return nil
}

// loggerOf is the configured logger, or one that discards.
func loggerOf(c *config) *slog.Logger {
	if c.logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.logger
}
