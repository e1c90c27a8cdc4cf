package leadership

import (
	"errors"
	"fmt"
	"unicode"
)

// Sentinel errors. Every error this package returns or reports matches one
// of them, or one of the Reasons below, with errors.Is.
var (
	// ErrNilStore is returned when a Candidate or Follower is built on a nil store.
	ErrNilStore = errors.New("leadership: nil store")
	// ErrEmptyKey is returned when the election key is empty or only slashes.
	ErrEmptyKey = errors.New("leadership: empty election key")
	// ErrEmptyName is returned when a candidate's name is empty.
	ErrEmptyName = errors.New("leadership: empty candidate name")
	// ErrInvalidTTL is returned when the TTL is zero, negative, below the
	// minimum the library or the store supports (MinTTL, or the store's
	// own MinTTL method), or above MaxTTL. The error is an *OptionError.
	ErrInvalidTTL = errors.New("leadership: invalid TTL")
	// ErrInvalidOption is returned when an option or an argument has a value
	// that cannot work, alone or together with the TTL: a value longer than
	// MaxValueSize (WithValue, Proclaim), a HandOff to the candidate itself,
	// a FencedPut to the election's own key. The error is an *OptionError
	// that names the option or argument.
	ErrInvalidOption = errors.New("leadership: invalid option")
	// ErrAlreadyRunning is returned by a second RunForElection or Run on
	// the same Candidate, or a second FollowElection on the same Follower.
	ErrAlreadyRunning = errors.New("leadership: already running")
	// ErrUnhealthy is matched by the errors of Candidate.Health and
	// Follower.Health: the engine is not making progress.
	ErrUnhealthy = errors.New("leadership: unhealthy")
	// ErrNotLeader is returned by Proclaim and HandOff on a candidate that
	// does not lead, and by FencedPut for a term this candidate never led.
	ErrNotLeader = errors.New("leadership: not the leader")
	// ErrHandOffInProgress is returned by a HandOff made while another
	// HandOff of the same candidate is under way: the first one's
	// successor stands.
	ErrHandOffInProgress = errors.New("leadership: a handoff is under way")
	// ErrHandOffFailed is returned by HandOff when the successor did not
	// take over: another candidate did, or no one within the window.
	ErrHandOffFailed = errors.New("leadership: handoff failed")
	// ErrFenced is matched by the error of a fenced write the store refused
	// because the election record no longer holds the term.
	ErrFenced = errors.New("leadership: fenced write refused")
	// ErrFencingUnsupported is returned by FencedPut on a store that cannot
	// check the record and write atomically (it does not implement
	// fenced.Putter).
	ErrFencingUnsupported = errors.New("leadership: the store does not support fenced writes")
	// ErrStore matches every error that comes from the store. The error
	// also matches the store's own error (errors.Is(err,
	// store.ErrKeyNotFound) works where the backend returns it), and its
	// text names the store call and the key.
	ErrStore = errors.New("leadership: store error")
	// ErrForeignValue is reported when the election key holds a value this
	// library did not write. The value is treated as a holder that never
	// renews: it is replaced once it has stayed unchanged for a TTL.
	ErrForeignValue = errors.New("leadership: election key holds a foreign value")
)

// Reason is why a term ended, and why a candidate or follower stopped. A
// Reason is an error: it is the cause (context.Cause) of a term's context
// once the term ended, and errors.Is matches it, as in
//
//	if errors.Is(context.Cause(term.Context()), leadership.ErrLeaseExpired) { ... }
//
// The list below is the whole list: logs, metrics and docs name the
// reasons with String.
type Reason int32

// The reasons a term ends. ErrStopped and ErrElectionEnded are also
// returned and reported outside of terms: a start after Stop returns
// ErrStopped, and the error channels (and a candidate's Status stream) of an ended
// election report ErrElectionEnded last.
const (
	// ErrLeaseExpired: no renewal was confirmed by the store before the
	// leader's deadline, so it stepped down on its own clock, before the
	// store could give the lease to another.
	ErrLeaseExpired Reason = iota + 1
	// ErrLostLeadership: the record showed that the candidate no longer
	// holds it (another took it, or the store lost or went back on the write).
	ErrLostLeadership
	// ErrResigned: Resign.
	ErrResigned
	// ErrRelinquished: the relinquish schedule came due
	// (WithRelinquishSchedule).
	ErrRelinquished
	// ErrStopped: Stop, or the candidate's context ended. Also returned
	// when RunForElection, Run or FollowElection is called after Stop.
	ErrStopped
	// ErrElectionEnded: EndElection or DeleteElection ended the election
	// for every candidate and follower; their channels close after it.
	ErrElectionEnded
	// ErrHandedOff: HandOff released the term to a named successor.
	ErrHandedOff

	lastReason = ErrHandedOff
)

// reasonNames are the Strings of the reasons, in order.
var reasonNames = [...]string{"none", "lease_expired", "lost", "resigned", "relinquished", "stopped", "election_ended", "handed_off"}

// reasonTexts are the Errors of the reasons, in order.
var reasonTexts = [...]string{
	"leadership: no reason",
	"leadership: lease expired without a confirmed renewal",
	"leadership: leadership lost",
	"leadership: resigned",
	"leadership: relinquished",
	"leadership: stopped",
	"leadership: election ended",
	"leadership: handed off",
}

// Error describes the reason.
func (r Reason) Error() string {
	if r < 0 || r > lastReason {
		return "leadership: unknown reason"
	}
	return reasonTexts[r]
}

// String is the reason's short name, used as a label by logs and metrics:
// lease_expired, lost, resigned, relinquished, stopped, election_ended or
// handed_off.
func (r Reason) String() string {
	if r < 0 || r > lastReason {
		return "unknown"
	}
	return reasonNames[r]
}

// storeFailure is a failed store request: it matches ErrStore and the
// store's own error.
type storeFailure struct {
	Op  string // the store call: "get", "watch", "acquire", "renew", "release", "end", "delete", "fenced put"
	Key string // the key
	Err error  // the store's error
}

// Error describes the error.
func (e *storeFailure) Error() string {
	return fmt.Sprintf("leadership: %s %q: %v", e.Op, e.Key, e.Err)
}

// Unwrap returns ErrStore and the store's error.
func (e *storeFailure) Unwrap() []error { return []error{ErrStore, e.Err} }

// OptionError names the argument or option that was refused and why. It
// unwraps to its kind, ErrInvalidOption or ErrInvalidTTL, and to an
// underlying error if any (such as a schedule parse error).
type OptionError struct {
	Option string // the option's name, such as "WithTimings" or "ttl"
	Reason string // what is wrong with it
	Kind   error  // ErrInvalidOption or ErrInvalidTTL
	Err    error  // an underlying error, or nil
}

// Error describes the error.
func (e *OptionError) Error() string {
	what := "invalid option " + e.Option
	if e.Option != "" && unicode.IsLower(rune(e.Option[0])) {
		what = "invalid argument " + e.Option // an argument, such as "successor"
	}
	if e.Kind == ErrInvalidTTL {
		what = "invalid TTL"
	}
	if e.Err != nil {
		return fmt.Sprintf("leadership: %s: %s: %v", what, e.Reason, e.Err)
	}
	return fmt.Sprintf("leadership: %s: %s", what, e.Reason)
}

// Unwrap returns the kind and the underlying error, if any.
func (e *OptionError) Unwrap() []error {
	kind := e.Kind
	if kind == nil {
		kind = ErrInvalidOption
	}
	if e.Err == nil {
		return []error{kind}
	}
	return []error{kind, e.Err}
}
