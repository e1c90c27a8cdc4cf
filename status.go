package leadership

import (
	"context"
	"time"
)

// Role is a candidate's part in an election.
type Role int

// The roles, in the spirit of Comcast's go-leaderelection and drio-ai's
// State.
const (
	RoleBootstrap Role = iota // running, has not yet read the election
	RoleFollower              // running, not the leader
	RoleLeader                // the leader: its lease is confirmed and its deadline not passed
	RoleStopped               // no longer running (stopped, cancelled or the election ended)
)

// String names the role.
func (r Role) String() string {
	switch r {
	case RoleBootstrap:
		return "bootstrap"
	case RoleFollower:
		return "follower"
	case RoleLeader:
		return "leader"
	case RoleStopped:
		return "stopped"
	}
	return "unknown"
}

// Status is one event of a candidate's status stream: its role, the leader
// it knows and the term, after every change of any of them, and with Err
// set when a store error occurred (the other fields are then still current).
type Status struct {
	Role        Role
	CandidateID string // this candidate's name
	Leader      string // the leader's name, "" when none is known
	Term        uint64 // the term of that leader (its fencing token), or the last one known
	Err         error  // a store error or ErrElectionEnded; nil for a plain change
}

// Term is one term of leadership held by a candidate.
type Term struct {
	Token uint64    // fencing token: strictly greater than every earlier term's
	Name  string    // the leader's name (the candidate's node name)
	Began time.Time // when the term was confirmed by the store
	ctx   context.Context
}

// Context is cancelled the moment this term ends: leadership lost, its
// deadline passed without a confirmed renewal, Resign, a relinquish, Stop,
// or the end of the election. Work done as leader should run under it.
// Once it is done, context.Cause(ctx) says why: a *TermEndedError whose
// Reason is ErrLostLeadership, ErrLeaseExpired, ErrResigned,
// ErrRelinquished or ErrElectionEnded, or, when Stop or the candidate's
// own context ended the run, ErrStopped.
func (t Term) Context() context.Context {
	if t.ctx == nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	return t.ctx
}

// Observation is one event of a follower's detailed stream.
type Observation struct {
	Leader string    // the leader's name, "" when there is none
	Term   uint64    // the leader's term (fencing token); the last term when Leader is ""
	Value  string    // what the leader publishes beside its name (Proclaim); "" when Leader is ""
	At     time.Time // when the follower saw the change
}
