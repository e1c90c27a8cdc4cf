package leadership

import (
	"context"
	"time"
)

// checkedCandidate is NewCandidate with the error RunForElection would
// return for the arguments, at once; the candidate is nil on error.
func checkedCandidate(client Backend, key, name string, ttl time.Duration, opts ...Option) (*Candidate, error) {
	c := NewCandidate(client, key, name, ttl, opts...)
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}

// checkedFollower is NewFollower with the error FollowElection would
// return for the arguments, at once; the follower is nil on error.
func checkedFollower(client Backend, key string, opts ...Option) (*Follower, error) {
	f := NewFollower(client, key, opts...)
	if f.err != nil {
		return nil, f.err
	}
	return f, nil
}

// runUnder is RunForElection under ctx: cancelling ctx stops the candidate
// as Stop does.
func (c *Candidate) runUnder(ctx context.Context) (<-chan bool, <-chan error, error) {
	if err := c.start(ctx, nil); err != nil {
		return nil, nil, err
	}
	return c.elected.channel(), c.errs.channel(), nil
}

// followUnder is FollowElection under ctx: cancelling ctx stops the
// follower as Stop does.
func (f *Follower) followUnder(ctx context.Context) (<-chan string, <-chan error, error) {
	if f.err != nil {
		return nil, nil, f.err
	}
	err := f.life.start(ctx, func(ctx context.Context) (func() error, error) {
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
