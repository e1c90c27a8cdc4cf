package leadership

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Every error this package returns or reports matches one
// of them with errors.Is.
var (
	// ErrNilStore is returned when a Candidate or Follower is built on a nil store.
	ErrNilStore = errors.New("leadership: nil store")
	// ErrEmptyKey is returned when the election key is empty or only slashes.
	ErrEmptyKey = errors.New("leadership: empty election key")
	// ErrEmptyName is returned when a candidate's node name is empty.
	ErrEmptyName = errors.New("leadership: empty candidate name")
	// ErrInvalidTTL is returned when the TTL is zero, negative, below the
	// minimum the library or the store supports, or above MaxTTL.
	ErrInvalidTTL = errors.New("leadership: invalid TTL")
	// ErrInvalidOption is returned when an option has a value that cannot work,
	// alone or together with the TTL.
	ErrInvalidOption = errors.New("leadership: invalid option")
	// ErrAlreadyRunning is returned by a second RunForElection, FollowElection
	// or Run on the same Candidate or Follower.
	ErrAlreadyRunning = errors.New("leadership: already running")
	// ErrStopped is returned when RunForElection, FollowElection or Run is
	// called after Stop.
	ErrStopped = errors.New("leadership: stopped")
	// ErrElectionEnded is reported to every candidate and follower of an
	// election that EndElection or DeleteElection ended; their channels close
	// after it.
	ErrElectionEnded = errors.New("leadership: election ended")
	// ErrResigned is why a term ended after Resign (see TermEndedError).
	ErrResigned = errors.New("leadership: resigned")
	// ErrRelinquished is why a term ended when its relinquish interval or
	// schedule came due (WithRelinquishInterval, WithRelinquishSchedule).
	ErrRelinquished = errors.New("leadership: relinquished")
	// ErrLeaseExpired is why a term ended when no renewal was confirmed by
	// the store before the leader's deadline: the leader stepped down on
	// its own clock, before the store could give the lease to another.
	ErrLeaseExpired = errors.New("leadership: lease expired without a confirmed renewal")
	// ErrLostLeadership is why a term ended when the record showed that
	// the candidate no longer holds it: another took it, or the store lost
	// or went back on the write.
	ErrLostLeadership = errors.New("leadership: leadership lost")
	// ErrUnhealthy is matched by the errors of Candidate.Health and
	// Follower.Health: the engine is not making progress.
	ErrUnhealthy = errors.New("leadership: unhealthy")
	// ErrNotLeader is returned by Proclaim on a candidate that does not
	// lead.
	ErrNotLeader = errors.New("leadership: not the leader")
	// ErrValueTooLarge is returned by Proclaim for a value longer than
	// MaxValueSize.
	ErrValueTooLarge = errors.New("leadership: value too large")
	// ErrHandedOff is why a term ended after HandOff.
	ErrHandedOff = errors.New("leadership: handed off")
	// ErrHandOffFailed is returned by HandOff when the successor did not
	// take over: another candidate did, or no one within the window.
	ErrHandOffFailed = errors.New("leadership: handoff failed")
	// ErrInvalidSuccessor is returned by HandOff for a successor that
	// cannot take over (the candidate itself).
	ErrInvalidSuccessor = errors.New("leadership: invalid successor")
	// ErrFenced is matched by the error of a fenced write the store refused
	// because the election record no longer holds the term (FencedError).
	ErrFenced = errors.New("leadership: fenced write refused")
	// ErrFencingUnsupported is returned by FencedPut on a store that cannot
	// check the record and write atomically (not a FencedWriter).
	ErrFencingUnsupported = errors.New("leadership: the store does not support fenced writes")
	// ErrElectionKey is returned by FencedPut for a write to the election's
	// own key: it would overwrite the record that guards it.
	ErrElectionKey = errors.New("leadership: a fenced write to the election's own key")
	// ErrStore matches every error that comes from the store (see StoreError).
	ErrStore = errors.New("leadership: store error")
	// ErrForeignValue is reported when the election key holds a value this
	// library did not write. The value is treated as a holder that never
	// renews: it is replaced once it has stayed unchanged for a TTL.
	ErrForeignValue = errors.New("leadership: election key holds a foreign value")
)

// StoreError is a failed store request. It unwraps to the store's own error,
// so errors.Is(err, store.ErrNotReachable) works where the backend returns it,
// and errors.Is(err, ErrStore) is always true.
type StoreError struct {
	Op  string // the store call: "get", "watch", "acquire", "renew", "release", "end"
	Key string // the election key
	Err error  // the store's error
}

// Error describes the error.
func (e *StoreError) Error() string {
	return fmt.Sprintf("leadership: %s %q: %v", e.Op, e.Key, e.Err)
}

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

// Is reports whether target is ErrStore.
func (e *StoreError) Is(target error) bool { return target == ErrStore }

// TTLError explains why a TTL was refused. It matches ErrInvalidTTL.
type TTLError struct {
	TTL time.Duration // the TTL that was asked for
	Min time.Duration // the smallest TTL allowed (by the library or the store)
	Max time.Duration // the largest TTL allowed
}

// Error describes the error.
func (e *TTLError) Error() string {
	return fmt.Sprintf("leadership: invalid TTL %v: must be between %v and %v", e.TTL, e.Min, e.Max)
}

// Is reports whether target is ErrInvalidTTL.
func (e *TTLError) Is(target error) bool { return target == ErrInvalidTTL }

// OptionError names the option that was refused and why. It matches
// ErrInvalidOption.
type OptionError struct {
	Option string // the option's name, such as "WithRenewInterval"
	Reason string // what is wrong with it
	Err    error  // an underlying error, such as a schedule parse error, or nil
}

// Error describes the error.
func (e *OptionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("leadership: invalid option %s: %s: %v", e.Option, e.Reason, e.Err)
	}
	return fmt.Sprintf("leadership: invalid option %s: %s", e.Option, e.Reason)
}

// Unwrap returns the underlying error, if any.
func (e *OptionError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidOption.
func (e *OptionError) Is(target error) bool { return target == ErrInvalidOption }

// TermEndedError is the cause (context.Cause) of a term's context once the
// term ended: which term, and why. Reason is ErrResigned, ErrRelinquished,
// ErrLeaseExpired, ErrLostLeadership, ErrElectionEnded or ErrStopped, and
// errors.Is matches it.
type TermEndedError struct {
	Token  uint64 // the term's fencing token
	Reason error  // why it ended: one of the sentinels above
}

// Error describes the error.
func (e *TermEndedError) Error() string {
	return fmt.Sprintf("leadership: term %d ended: %v", e.Token, e.Reason)
}

// Unwrap returns the reason.
func (e *TermEndedError) Unwrap() error { return e.Reason }
