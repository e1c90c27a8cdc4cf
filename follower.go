package leadership

import (
	"context"
	"sync/atomic"
)

// Follower follows an election and reports who leads it. It never reports
// a leader that is gone: after a clean release it reports "" (or the next
// leader) as soon as the store shows it, and after a leader vanished it
// reports "" once the leader's record has gone unrenewed for 90% of its TTL
// since the follower last saw it renewed (a read at 80% checks for a
// renewal the watch missed; it must answer in time), before any candidate
// may take over.
// Every method is safe for concurrent use.
type Follower struct {
	client Backend
	key    string
	cfg    config
	err    error

	life     *lifecycle
	progress progress // the last store call that worked (for Health)
	clock    elapsed
	leaders  *queueSink[string]
	errs     *queueSink[error]
	events   *queueSink[Status]
	view     atomic.Pointer[Status]
}

// Queue limit of the follower's leader and observation channels, which
// drop their oldest values when no one reads.
const leaderQueueLimit = 1024

// NewFollower creates a follower of the election at key. Nothing runs
// until FollowElection; problems with the arguments are returned from there
// (ErrNilStore, ErrEmptyKey, ErrInvalidOption): a follower given an
// option of candidates only refuses to start.
func NewFollower(client Backend, key string, opts ...Option) *Follower {
	f := &Follower{
		client:  client,
		key:     normalizeKey(key),
		cfg:     newConfig(opts),
		leaders: newQueueSink[string](leaderQueueLimit),
		errs:    newQueueSink[error](errQueueLimit),
		events:  newQueueSink[Status](leaderQueueLimit),
	}
	f.life = newLifecycle(f.leaders, f.errs, f.events)
	f.clock = startElapsed(f.cfg.clock)
	f.view.Store(&Status{})
	switch {
	case isNil(client):
		f.err = ErrNilStore
	case f.key == "":
		f.err = ErrEmptyKey
	default:
		f.err = f.cfg.resolve(0)
	}
	return f
}

// FollowElection starts following in the background. It reads the election
// once before returning, so an unreachable store is an error here. The
// leader channel delivers the current leader first ("" when there is none),
// then every change; it keeps the latest 1024 changes if no one reads. The
// error channel reports store errors, after which the follower keeps
// trying. Both close when the follower stops: after Stop, or after the
// election is ended (ErrElectionEnded is then the last error). A follower
// that stops names no one from then on: its last leader is "" (it no
// longer sees the holder's renewals, so it cannot vouch for its lease).
func (f *Follower) FollowElection() (<-chan string, <-chan error, error) {
	if f.err != nil {
		return nil, nil, f.err
	}
	err := f.life.start(context.Background(), func(ctx context.Context) (func() error, error) {
		e := newFollowing(ctx, f.client, f.key, &f.cfg, f.clock, f)
		if err := e.begin(); err != nil {
			return nil, err
		}
		return e.run, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return f.leaders.channel(), f.errs.channel(), nil
}

// Leader returns the current leader's name, "" when there is none or once
// the follower has stopped (or is stopping): the Leader of Current, as
// docker/leadership's Follower.Leader.
func (f *Follower) Leader() string { return f.view.Load().Leader }

// Current returns the follower's latest Status: the leader, its term and
// value, and when the follower saw it. It is the state the Status stream's
// last event left, read at once, with no reader's lag: what a proxy routes
// a request by at the moment it arrives.
func (f *Follower) Current() Status { return *f.view.Load() }

// Status returns a stream like the leader channel that also carries the
// term, the leader's value and the time of each change, including a new
// term of the same leader. It keeps the latest 1024 events if no one
// reads, and closes when the follower stops. Every call returns the same
// channel.
func (f *Follower) Status() <-chan Status { return f.events.channel() }

// Stop stops following, closes the channels and returns once every
// goroutine the follower started has ended. It is safe to call at any time,
// any number of times, from any goroutine.
func (f *Follower) Stop() { f.life.stop() }

// Done is closed once the follower has stopped and every goroutine it
// started has ended.
func (f *Follower) Done() <-chan struct{} { return f.life.done }

// Err returns why the follower stopped: ErrElectionEnded, or nil after
// Stop. It returns nil while the follower runs.
func (f *Follower) Err() error { return f.life.err() }

// The follower's side of the engine's reports (followingReports): each
// queues what it is told and returns at once.

func (f *Follower) storeError(err *storeFailure) { f.errs.push(err) }

func (f *Follower) ended(err error) {
	if err != nil {
		f.errs.push(err)
	}
}

func (f *Follower) observed(o Status, nameChanged bool) {
	f.view.Store(&o)
	f.events.push(o)
	if nameChanged {
		f.leaders.push(o.Leader)
	}
}
