package leadership

import (
	"context"
	"errors"
)

// The tests' views of a candidate and a follower that the API gives through
// its streams and callbacks (issue 33 took the duplicates out of the API).

// awaitTerm runs the candidate if it is not running yet and returns once it
// leads a term, or ctx ends (the blocking Campaign the API had). If ctx
// ends first, a candidacy this call started is stopped; one started before
// keeps running. If the candidate stops while waiting, it returns why
// (ErrElectionEnded), or ErrStopped.
func (c *Candidate) awaitTerm(ctx context.Context) (Term, error) {
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

// leader is the leader as the candidate last saw it (its latest Status).
func (c *Candidate) leader() string { return c.view.Load().Leader }
