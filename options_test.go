package leadership

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/memory"
)

func TestBadInput(t *testing.T) {
	c := newCluster(t)
	h := c.handle()
	var nilStore *memory.Store
	tests := []struct {
		name string
		kv   store.Store
		key  string
		node string
		ttl  time.Duration
		opts []Option
		want error
	}{
		{"nil store", nil, "k", "n", time.Second, nil, ErrNilStore},
		{"typed nil store", nilStore, "k", "n", time.Second, nil, ErrNilStore},
		{"empty key", h, "", "n", time.Second, nil, ErrEmptyKey},
		{"slash key", h, "//", "n", time.Second, nil, ErrEmptyKey},
		{"empty node", h, "k", "", time.Second, nil, ErrEmptyName},
		{"zero ttl", h, "k", "n", 0, nil, ErrInvalidTTL},
		{"negative ttl", h, "k", "n", -time.Second, nil, ErrInvalidTTL},
		{"ttl below minimum", h, "k", "n", time.Millisecond, nil, ErrInvalidTTL},
		{"ttl above maximum", h, "k", "n", 25 * time.Hour, nil, ErrInvalidTTL},
		{"ttl below the store's minimum", minTTLStore{h, time.Minute}, "k", "n", time.Second, nil, ErrInvalidTTL},
		{"renew interval too long", h, "k", "n", time.Second, []Option{WithTimings(Timings{Renew: time.Second})}, ErrInvalidOption},
		{"negative renew interval", h, "k", "n", time.Second, []Option{WithTimings(Timings{Renew: -time.Second})}, ErrInvalidOption},
		{"margin too large", h, "k", "n", time.Second, []Option{WithTimings(Timings{SafetyMargin: 600 * time.Millisecond})}, ErrInvalidOption},
		{"bad request timeout", h, "k", "n", time.Second, []Option{WithTimings(Timings{RequestTimeout: -time.Second})}, ErrInvalidOption},
		{"bad backoff", h, "k", "n", time.Second, []Option{WithTimings(Timings{RetryMin: time.Second, RetryMax: time.Millisecond})}, ErrInvalidOption},
		{"negative relinquish", h, "k", "n", time.Second, []Option{WithRelinquishSchedule("@every -1s")}, ErrInvalidOption},
		{"zero relinquish", h, "k", "n", time.Second, []Option{WithRelinquishSchedule("@every 0s")}, ErrInvalidOption},
		{"bad relinquish interval", h, "k", "n", time.Second, []Option{WithRelinquishSchedule("@every soon")}, ErrInvalidOption},
		{"bad schedule", h, "k", "n", time.Second, []Option{WithRelinquishSchedule("every tuesday")}, ErrInvalidOption},
		{"bad poll interval", h, "k", "n", time.Second, []Option{WithTimings(Timings{Poll: -time.Second})}, ErrInvalidOption},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cand := NewCandidate(tc.kv, tc.key, tc.node, tc.ttl, tc.opts...)
			el, errs, err := cand.RunForElection()
			if !errors.Is(err, tc.want) {
				t.Fatalf("RunForElection: %v, want %v", err, tc.want)
			}
			if el != nil || errs != nil {
				t.Fatal("channels returned with an error")
			}
			if err := cand.Run(ctxT(t), Callbacks{}); !errors.Is(err, tc.want) {
				t.Fatalf("Run: %v, want %v", err, tc.want)
			}
			cand.Stop() // nothing was started; Stop still works
		})
	}
	var te *OptionError
	if err := NewCandidate(h, "k", "n", time.Millisecond).validate(); !errors.Is(err, ErrInvalidTTL) || !errors.As(err, &te) || !strings.Contains(te.Reason, "between "+MinTTL.String()) {
		t.Fatalf("ErrInvalidTTL not returned: %v", err)
	}
	var oe *OptionError
	if _, _, err := NewCandidate(h, "k", "n", time.Second, WithRelinquishSchedule("x")).RunForElection(); !errors.As(err, &oe) || oe.Option != "WithRelinquishSchedule" || oe.Err == nil {
		t.Fatalf("OptionError not returned: %v", err)
	}
	for _, f := range []*Follower{NewFollower(nil, "k"), NewFollower(h, ""), NewFollower(h, "k", WithTimings(Timings{Poll: -time.Second}))} {
		if _, _, err := f.FollowElection(); err == nil {
			t.Fatal("follower with bad input started")
		}
		f.Stop()
	}
}

// minTTLStore is a store that declares a minimum TTL.
type minTTLStore struct {
	store.Store
	min time.Duration
}

func (s minTTLStore) MinTTL() time.Duration { return s.min }

func TestDefaults(t *testing.T) {
	c := newConfig(nil)
	if err := c.resolve(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	if c.renewInterval != 5*time.Second || c.safetyMargin != 1500*time.Millisecond || c.requestTimeout != 5*time.Second ||
		c.resignHoldoff != 2*time.Second || c.pollInterval != 5*time.Second {
		t.Fatalf("defaults for 15s: %+v", c)
	}
	z := newConfig([]Option{WithTimings(Timings{SafetyMargin: -1}), WithTimings(Timings{ResignHoldoff: -1})})
	if err := z.resolve(time.Second); err != nil || z.safetyMargin != 0 || z.resignHoldoff != 0 {
		t.Fatalf("explicit zeros: %+v %v", z, err)
	}
}

// A TTL that is not a whole number of milliseconds is rounded up, so the
// leader's deadline and the waiters' timing agree.
func TestTTLRoundedToMilliseconds(t *testing.T) {
	c := newCluster(t)
	cand := NewCandidate(c.handle(), "round", "a", 30*time.Millisecond+999*time.Microsecond)
	if cand.ttl != 31*time.Millisecond {
		t.Fatalf("ttl %v", cand.ttl)
	}
}

// A schedule that never fires is refused.
func TestScheduleThatNeverFires(t *testing.T) {
	c := newCluster(t)
	_, _, err := NewCandidate(c.handle(), "never", "a", time.Second, WithRelinquishSchedule("0 0 30 2 *")).RunForElection()
	if !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Feb 30: %v", err)
	}
}

// An option of candidates only, given to a follower, is refused where the
// mistake is made; the options both take are accepted.
func TestCandidateOnlyOptionsRefusedByFollower(t *testing.T) {
	h := newCluster(t).handle()
	for _, opt := range []struct {
		name string
		opt  Option
	}{
		{"WithTimings Renew", WithTimings(Timings{Renew: time.Second})},
		{"WithTimings SafetyMargin", WithTimings(Timings{SafetyMargin: time.Second})},
		{"WithTimings ResignHoldoff", WithTimings(Timings{ResignHoldoff: time.Second})},
		{"WithRelinquishSchedule", WithRelinquishSchedule("@every 1m")},
		{"WithTimings StartupWait", WithTimings(Timings{StartupWait: time.Second})},
	} {
		f, err := checkedFollower(h, "k", WithTimings(Timings{Poll: time.Second}), opt.opt)
		var oe *OptionError
		if f != nil || !errors.As(err, &oe) || oe.Option != opt.name || !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s on a follower: %v, %v", opt.name, f, err)
		}
		if _, _, err := NewFollower(h, "k", opt.opt).FollowElection(); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: FollowElection: %v", opt.name, err)
		}
	}
	f, err := checkedFollower(h, "k", WithTimings(Timings{Poll: time.Second}), WithTimings(Timings{RequestTimeout: time.Second}),
		WithTimings(Timings{RetryMin: time.Millisecond, RetryMax: time.Second}), WithLogger(nil), withClock(systemClock{}))
	if err != nil {
		t.Fatalf("the options a follower takes: %v", err)
	}
	f.Stop()
}

// The checked constructors return the errors NewCandidate and NewFollower
// leave to the start, and a usable value otherwise.
func TestCheckedConstructors(t *testing.T) {
	h := newCluster(t).handle()
	for _, tc := range []struct {
		err  error
		make func() (*Candidate, error)
	}{
		{ErrNilStore, func() (*Candidate, error) { return checkedCandidate(nil, "k", "a", time.Second) }},
		{ErrEmptyKey, func() (*Candidate, error) { return checkedCandidate(h, "/", "a", time.Second) }},
		{ErrEmptyName, func() (*Candidate, error) { return checkedCandidate(h, "k", "", time.Second) }},
		{ErrInvalidTTL, func() (*Candidate, error) { return checkedCandidate(h, "k", "a", time.Millisecond) }},
		{ErrInvalidOption, func() (*Candidate, error) {
			return checkedCandidate(h, "k", "a", time.Second, WithTimings(Timings{Renew: time.Second}))
		}},
	} {
		if c, err := tc.make(); c != nil || !errors.Is(err, tc.err) {
			t.Errorf("got %v, %v; want %v", c, err, tc.err)
		}
	}
	if _, err := checkedFollower(nil, "k"); !errors.Is(err, ErrNilStore) {
		t.Errorf("follower, nil store: %v", err)
	}
	if _, err := checkedFollower(h, ""); !errors.Is(err, ErrEmptyKey) {
		t.Errorf("follower, empty key: %v", err)
	}
	c, err := checkedCandidate(h, "k", "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.awaitTerm(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	c.Stop()
}
