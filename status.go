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

// Status is one event of a status stream (Candidate.Status,
// Follower.Status), and the state it leaves (Follower.Current): the
// leader, its term and the value it publishes, after every change of any
// of them.
type Status struct {
	Role        Role      // the candidate's part; RoleFollower for a follower (RoleBootstrap before FollowElection)
	CandidateID string    // the candidate's own name ("" for a follower)
	Leader      string    // the leader's name, "" when none is known
	Token       uint64    // the leader's Term.Token as observed; the last term known when Leader is ""
	Value       string    // what the leader publishes beside its name (Proclaim, WithValue); "" when Leader is ""
	At          time.Time // when the change was seen
	Err         error     // a candidate's store error, or ErrElectionEnded; nil for a plain change
}

// Term is one term of leadership held by a candidate.
type Term struct {
	Token uint64    // fencing token: strictly greater than every earlier term's (observers see it as Status.Token)
	Began time.Time // when the term was confirmed by the store
	ctx   context.Context
}

// Context is cancelled the moment this term ends: leadership lost, its
// deadline passed without a confirmed renewal, Resign, a relinquish,
// HandOff, Stop, or the end of the election. Work done as leader should
// run under it. Once it is done, context.Cause(ctx) is the Reason it ended
// (ErrLeaseExpired, ErrLostLeadership, ...), which errors.Is matches.
func (t Term) Context() context.Context {
	if t.ctx == nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	return t.ctx
}
