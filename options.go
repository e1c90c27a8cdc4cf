package leadership

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
)

// Limits on the TTL. A store may raise the minimum by implementing
// MinTTLer.
const (
	MinTTL = 10 * time.Millisecond
	MaxTTL = 24 * time.Hour
)

// Option tunes a Candidate or a Follower. Options that only concern
// candidates (renewal, margins, relinquishing) are ignored by followers.
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
	pollByTTL          bool // a follower's default poll: while watched, at least every TTL/3 of the record
	startupWait        time.Duration
	clock              Clock
	jitter             func(n time.Duration) time.Duration // test hook: a draw in [0, n), rand.N when nil
	metrics            Metrics
	value              string   // WithValue
	errs               []error  // option errors found while applying options
	candidateOpts      []string // the candidate-only options given, by name
}

// WithLogger sends the engine's log lines to l, each one structured line
// with the key (and a candidate's node): "leadership: elected" (Info, with
// the term), "leadership: stepped down" (Info, with the term and the
// reason: deadline, lost, resigned, relinquished, stopped, ended),
// "leadership: store error" (Warn: the first error of an outage, then at
// most one every 10s, with the count so far), "leadership: store
// recovered" (Info, with the count and the outage's length), and warnings
// for a foreign value at the key or a store that went back in time. By
// default nothing is logged, not even on slog's default logger.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithRenewInterval sets how often a leader rewrites its lease.
// Default: TTL/3. It must be positive and leave room before the deadline
// (shorter than TTL minus the safety margin).
// Candidates only: a follower given it refuses to start (ErrInvalidOption).
func WithRenewInterval(d time.Duration) Option {
	return candidateOnly("WithRenewInterval", positiveDuration("WithRenewInterval", d, func(c *config) *time.Duration { return &c.renewInterval }))
}

// WithSafetyMargin sets how long before the store could hand the lease to
// someone else the leader steps down when it cannot confirm its lease: the
// deadline is the start of the last confirmed renewal + TTL - margin. It
// covers clock-rate drift and the time the leader's work needs to notice
// the cancellation. Default: TTL/10. It must be at least zero and under TTL/2.
// Candidates only: a follower given it refuses to start (ErrInvalidOption).
func WithSafetyMargin(d time.Duration) Option {
	return candidateOnly("WithSafetyMargin", nonNegativeDuration("WithSafetyMargin", d, true, func(c *config) *time.Duration { return &c.safetyMargin }))
}

// WithRequestTimeout bounds every store request. Default: TTL/3, at most 10s.
func WithRequestTimeout(d time.Duration) Option {
	return positiveDuration("WithRequestTimeout", d, func(c *config) *time.Duration { return &c.requestTimeout })
}

// WithRetryBackoff sets the first and the longest wait between retries after
// a store error; the wait doubles, with jitter, from min to max.
// Default: 10ms to 1s (a leader always retries in time for its deadline).
func WithRetryBackoff(minWait, maxWait time.Duration) Option {
	return func(c *config) {
		if minWait <= 0 || maxWait < minWait {
			c.refuse("WithRetryBackoff", fmt.Sprintf("need 0 < min <= max, got %v and %v", minWait, maxWait))
		}
		c.retryMin, c.retryMax = minWait, maxWait
	}
}

// WithResignHoldoff sets how long a candidate that resigned or relinquished
// leaves a free election to the others before it competes again. If no one
// else takes it in that time, the candidate takes it back. Default: TTL/4,
// between 100ms and 2s.
// Candidates only: a follower given it refuses to start (ErrInvalidOption).
func WithResignHoldoff(d time.Duration) Option {
	return candidateOnly("WithResignHoldoff", nonNegativeDuration("WithResignHoldoff", d, true, func(c *config) *time.Duration { return &c.resignHoldoff }))
}

// WithRelinquishInterval makes a leader step down after holding leadership
// for d, so that a waiting candidate wins (drio-ai's RelinquishInterval).
// Zero, the default, never relinquishes. Ignored when
// WithRelinquishSchedule is given.
// Candidates only: a follower given it refuses to start (ErrInvalidOption).
func WithRelinquishInterval(d time.Duration) Option {
	return candidateOnly("WithRelinquishInterval", nonNegativeDuration("WithRelinquishInterval", d, false, func(c *config) *time.Duration { return &c.relinquishInterval }))
}

// WithRelinquishSchedule makes a leader step down at every time of a
// schedule (drio-ai's RelinquishIntervalSpec): a standard five-field cron
// line such as "0 0 * * *", or a descriptor such as "@hourly" or
// "@every 60s". It overrides WithRelinquishInterval.
// Candidates only: a follower given it refuses to start (ErrInvalidOption).
func WithRelinquishSchedule(spec string) Option {
	return candidateOnly("WithRelinquishSchedule", func(c *config) {
		sched, err := cron.ParseStandard(spec)
		if err != nil {
			c.errs = append(c.errs, &OptionError{Option: "WithRelinquishSchedule", Reason: fmt.Sprintf("cannot parse %q", spec), Err: err})
			return
		}
		if sched.Next(time.Now()).IsZero() {
			c.refuse("WithRelinquishSchedule", fmt.Sprintf("%q never fires", spec))
			return
		}
		c.relinquishSpec, c.relinquishSchedule = spec, sched
	})
}

// WithPollInterval sets how often the key is read while the store's watch
// is not working, so that changes are still seen; while it works, the key
// is still read every 3 poll intervals. Default: TTL/3 for candidates; 1s
// for followers, whose reads while the watch works come every 3s or every
// TTL/3 of the leader's record, whichever is longer (a follower of a
// 30s lease reads 6 times a minute, not 20).
func WithPollInterval(d time.Duration) Option {
	return positiveDuration("WithPollInterval", d, func(c *config) *time.Duration { return &c.pollInterval })
}

// WithStartupWait makes a candidate begin its first term no sooner than d
// after it first read the election. A store that lost its data (a server
// restarted without persistence, a wiped or restored data directory) may
// show the key missing, free or ended while the leader of before, cut off,
// still acts until its lease ends: a candidate that starts at that moment
// saw nothing of that leader. Set d to the longest TTL any candidate of the
// election uses, and a candidate leads only once such a leader's lease has
// surely ended. The cost is a wait of d before a new process's first term
// (the very first leader of a new election included). Candidates that saw
// the record before the loss need no option: they wait out the lost
// holder's lease by themselves. Default: 0 (no wait). It must not be
// negative.
// Candidates only: a follower given it refuses to start (ErrInvalidOption).
func WithStartupWait(d time.Duration) Option {
	return candidateOnly("WithStartupWait", nonNegativeDuration("WithStartupWait", d, false, func(c *config) *time.Duration { return &c.startupWait }))
}

// positiveDuration is the option name setting the field of config that
// field points to to d, which must be positive.
func positiveDuration(name string, d time.Duration, field func(*config) *time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			c.refuse(name, fmt.Sprintf("%v is not positive", d))
		}
		*field(c) = d
	}
}

// nonNegativeDuration is the option name setting the field of config that
// field points to to d, which must not be negative. With explicitZero, a
// zero d is stored as -1, kept apart from "unset" (which takes a default).
func nonNegativeDuration(name string, d time.Duration, explicitZero bool, field func(*config) *time.Duration) Option {
	return func(c *config) {
		if d < 0 {
			c.refuse(name, fmt.Sprintf("%v is negative", d))
		}
		*field(c) = d
		if d == 0 && explicitZero {
			*field(c) = -1
		}
	}
}

// candidateOnly marks opt, named name, as an option of candidates only: a
// follower given it refuses to start.
func candidateOnly(name string, opt Option) Option {
	return func(c *config) {
		c.candidateOpts = append(c.candidateOpts, name)
		opt(c)
	}
}

// notNil is the option name, which set applies, refused when its value v
// is nil.
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
		c.metrics = NoMetrics{}
	}
	return c
}

// resolve fills the defaults that depend on the TTL and checks that the
// durations fit together. ttl 0 means a follower (no lease of its own).
func (c *config) resolve(ttl time.Duration) error {
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
		c.pollInterval = ttl / 3
	}
	if c.safetyMargin >= ttl/2 {
		return &OptionError{Option: "WithSafetyMargin", Reason: fmt.Sprintf("%v must be under half the TTL %v", c.safetyMargin, ttl)}
	}
	if c.renewInterval >= ttl-c.safetyMargin {
		return &OptionError{Option: "WithRenewInterval", Reason: fmt.Sprintf("%v leaves no time to renew before the deadline (TTL %v - margin %v)", c.renewInterval, ttl, c.safetyMargin)}
	}
	return nil
}

// checkTTL validates a candidate's TTL against the library's limits and the
// store's own minimum, if it declares one.
func checkTTL(ttl time.Duration, client any) error {
	lo := MinTTL
	if m, ok := client.(MinTTLer); ok && m.MinTTL() > lo {
		lo = m.MinTTL()
	}
	if ttl < lo || ttl > MaxTTL {
		return &TTLError{TTL: ttl, Min: lo, Max: MaxTTL}
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
