package leadership

import (
	"context"
	"errors"
	"sync"
)

// Campaign is the blocking way to run for election, as etcd's
// Election.Campaign and Curator's LeaderLatch.await: it starts the
// candidacy if it is not running yet, and returns once the candidate leads
// a term (the term CurrentTerm returns) or ctx ends.
//
// If ctx ends first, Campaign returns context.Cause(ctx); a candidacy that
// this call started is then stopped for good, as by Stop (a stopped
// Candidate cannot run again: make a new one), while one started before,
// by RunForElection, Run or another Campaign, keeps running. If the candidate stops while waiting,
// Campaign returns why (ErrElectionEnded), or ErrStopped. A candidate that
// already leads returns its term at once. The term lasts until its
// Context ends; Resign and Stop end it.
func (c *Candidate) Campaign(ctx context.Context) (Term, error) {
	if err := ctx.Err(); err != nil {
		return Term{}, context.Cause(ctx)
	}
	started := true
	if err := c.start(context.Background(), nil); errors.Is(err, ErrAlreadyRunning) {
		started = false
	} else if err != nil {
		return Term{}, err
	}
	for {
		began := c.began.wait()
		if t, ok := c.CurrentTerm(); ok {
			return t, nil
		}
		select {
		case <-began:
		case <-c.life.done:
			if err := c.life.err(); err != nil {
				return Term{}, err
			}
			return Term{}, ErrStopped
		case <-ctx.Done():
			if started {
				c.Stop()
			}
			return Term{}, context.Cause(ctx)
		}
	}
}

// broadcast wakes every goroutine waiting on it each time it is notified.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next notify.
func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// notify wakes the goroutines waiting.
func (b *broadcast) notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
