package leadership

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"sync/atomic"
	"time"
)

// Candidate runs for election on a key of a store. At most one candidate of
// a key acts as leader at any instant: a leader that cannot confirm its
// lease steps down at its own deadline, before the store could let anyone
// else win. Every method is safe for concurrent use.
type Candidate struct {
	client Backend
	key    string
	node   string
	ttl    time.Duration
	cfg    config
	err    error // from the constructor, returned when the campaign starts

	life     *lifecycle
	clock    elapsed
	leases   *leaseKeeper
	elected  *boolSink
	errs     *queueSink[error]
	statuses *queueSink[Status]
	terms    atomic.Pointer[queueSink[termEvent]] // set by Run only
	view     atomic.Pointer[Status]               // the latest status
	began    broadcast                            // notified when a term begins (the tests wait on it)
	progress progress                             // the last store call that worked (for Health)
	values   proclamation                         // the value published beside the name
	handoff  successorBox                         // the successor of a HandOff under way
	// viewChanged is notified whenever view changes (for HandOff).
	viewChanged broadcast
	// waitingSince is when the candidate began waiting for its next term:
	// its start, or the end of its last term. Used by the lease reports
	// only, which the lease keeper serializes.
	waitingSince time.Duration
}

// Queue limits for the channels that may drop their oldest values when no
// one reads them. The elected channel never drops a transition.
const (
	errQueueLimit    = 64
	statusQueueLimit = 256
)

// NewCandidate creates a candidate named node (its Status.CandidateID, and
// the name followers report while it leads) for the election at key, with
// a lease of ttl. Nothing runs until RunForElection or Run;
// problems with the arguments or options are returned from there as typed
// errors (ErrNilStore, ErrEmptyKey, ErrEmptyName, ErrInvalidTTL,
// ErrInvalidOption). To stop a candidate when a context ends, use
// context.AfterFunc(ctx, c.Stop).
func NewCandidate(client Backend, key, node string, ttl time.Duration, opts ...Option) *Candidate {
	c := &Candidate{
		client:   client,
		key:      normalizeKey(key),
		node:     node,
		ttl:      ttl,
		cfg:      newConfig(opts),
		elected:  newBoolSink(),
		errs:     newQueueSink[error](errQueueLimit),
		statuses: newQueueSink[Status](statusQueueLimit),
	}
	c.life = newLifecycle(c.elected, c.errs, c.statuses)
	c.clock = startElapsed(c.cfg.clock)
	c.view.Store(&Status{Role: RoleBootstrap, CandidateID: node})
	c.err = c.validate()
	c.values.want = c.cfg.value
	c.leases = newLeaseKeeper(c.clock, c, loggerOf(&c.cfg).With("key", c.key, "node", c.node))
	// The record carries the TTL in whole milliseconds and waiters time
	// that: the leader's own deadline must use the same, never less.
	c.ttl = (c.ttl + time.Millisecond - 1).Truncate(time.Millisecond)
	return c
}

func (c *Candidate) validate() error {
	switch {
	case isNil(c.client):
		return ErrNilStore
	case c.key == "":
		return ErrEmptyKey
	case c.node == "":
		return ErrEmptyName
	}
	if err := checkTTL(c.ttl, c.client); err != nil {
		return err
	}
	return c.cfg.resolve(c.ttl)
}

// RunForElection starts campaigning in the background and returns the
// elected channel, the error channel and an error if the campaign could not
// start (bad arguments or options, a second call, a call after Stop, or a
// store that cannot be read: the first read is done before it returns).
//
// The elected channel delivers false first, then every change of leadership
// in order (true when elected, false when leadership ends); a reader that
// falls behind still sees every transition. The error channel reports store
// errors, after which the candidate keeps trying; it keeps the latest 64 if
// no one reads. Both close when the candidate stops: after Stop, after the
// election is ended (ErrElectionEnded is then the last error).
func (c *Candidate) RunForElection() (<-chan bool, <-chan error, error) {
	if err := c.start(context.Background(), nil); err != nil {
		return nil, nil, err
	}
	return c.elected.channel(), c.errs.channel(), nil
}

// start checks the arguments, reads the election once and starts the
// engine and the channel deliverers. terms, if not nil, receives the
// beginning and end of every term (for Run).
func (c *Candidate) start(ctx context.Context, terms *queueSink[termEvent]) error {
	if c.err != nil {
		return c.err
	}
	return c.life.start(ctx, func(ctx context.Context) (func() error, error) {
		ctx, cancel := context.WithCancel(ctx)
		c.terms.Store(terms)
		c.waitingSince = c.clock.now()
		e := newCampaign(ctx, c.client, c.key, c.node, c.ttl, &c.cfg, c.clock, c.leases, &c.values, &c.handoff, c)
		if err := e.begin(); err != nil {
			cancel()
			c.terms.Store(nil)
			return nil, err
		}
		return func() error {
			err := e.run()
			cancel()
			c.leases.wait()
			return err
		}, nil
	})
}

// IsLeader reports whether the candidate is the leader now: it holds a term
// and the deadline of its last confirmed renewal has not passed.
func (c *Candidate) IsLeader() bool { return c.leases.valid() != nil }

// CurrentTerm returns the term the candidate leads, if it is the leader.
// The term's Token is its fencing token and its Context ends with it.
func (c *Candidate) CurrentTerm() (Term, bool) {
	l := c.leases.valid()
	if l == nil {
		return Term{}, false
	}
	return l.term, true
}

// Status returns the candidate's status stream: its role, the leader and
// the term after every change, and store errors. It keeps the latest 256
// events if no one reads, and closes when the candidate stops. Every call
// returns the same channel.
func (c *Candidate) Status() <-chan Status { return c.statuses.channel() }

// Resign gives up leadership at once: IsLeader is false and the term's
// context is cancelled before Resign returns, and the record is released in
// the background so that a waiting candidate wins. The candidate keeps
// running and competes again after its resign holdoff (Timings.ResignHoldoff);
// if no one else took leadership by then, it takes it back. Without
// leadership, Resign does nothing.
func (c *Candidate) Resign() { c.leases.stepDownNow(ErrResigned) }

// Stop ends the candidacy: it steps down, releases leadership so that the
// next candidate wins at once, closes the channels and returns once every
// goroutine the candidate started has ended. It is safe to call at any time,
// any number of times, from any goroutine, including before RunForElection
// (which then returns ErrStopped).
func (c *Candidate) Stop() { c.life.stop() }

// Done is closed once the candidate has stopped and every goroutine it
// started has ended.
func (c *Candidate) Done() <-chan struct{} { return c.life.done }

// Err returns why the candidate stopped: ErrElectionEnded, or nil after
// Stop or a cancelled context. It returns nil while the candidate runs.
func (c *Candidate) Err() error { return c.life.err() }

// The candidate's side of the engine's reports (campaignReports,
// leaseReports): each queues what it is told and returns at once.

// termBeginning reports the term to the metrics before anyone can see it
// (a reader of the elected channel reads is_leader 1 as soon as it sees
// true).
func (c *Candidate) termBeginning(t Term) {
	c.cfg.metrics.TermBegan(c.key, c.node, t.Token, c.clock.now()-c.waitingSince)
}

func (c *Candidate) termBegan(t Term) {
	c.elected.push(true)
	if q := c.terms.Load(); q != nil {
		q.push(termEvent{term: t, began: true})
	}
	c.began.notify()
}

func (c *Candidate) termEnded(t Term, why Reason) {
	c.elected.push(false)
	if q := c.terms.Load(); q != nil {
		q.push(termEvent{term: t, why: why})
	}
	c.waitingSince = c.clock.now()
	c.cfg.metrics.TermEnded(c.key, c.node, t.Token, why)
}

func (c *Candidate) storeError(err *storeFailure) {
	c.errs.push(err)
	v := c.view.Load()
	c.status(v.Role, v.Leader, v.Token, v.Value, err)
}

func (c *Candidate) ended(err error) {
	if err != nil {
		c.errs.push(err)
	}
}

// status publishes a new status when something in it changed, or when err
// is not nil.
func (c *Candidate) status(role Role, leader string, token uint64, value string, err error) {
	old := c.view.Load()
	if err == nil && old.Role == role && old.Leader == leader && old.Token == token && old.Value == value {
		return
	}
	s := &Status{Role: role, CandidateID: c.node, Leader: leader, Token: token, Value: value, At: c.cfg.clock.Now(), Err: err}
	c.view.Store(s)
	c.statuses.push(*s)
	c.viewChanged.notify()
}

// newInstanceID names one campaign in the record, so that two candidates
// with the same node name are never mistaken for each other.
func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// isNil reports whether an interface holds nothing or a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
