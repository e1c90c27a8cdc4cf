package leadership

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// HandOff ends the candidate's term and releases the record to the
// candidate named successor: for a window of the candidate's TTL only that
// candidate may take the next term, then anyone may. The successor takes
// it as soon as it sees the release (milliseconds with a working watch);
// the others wait out the window on their own clocks. Tokens keep growing:
// the successor's term is a new one. This is the graceful handoff that
// client-go offers only as an alpha.
//
// HandOff returns nil once this candidate sees the successor lead;
// ErrHandOffFailed if another candidate led instead, or no one within the
// window (leadership was released all the same); ErrNotLeader if the
// candidate does not lead; ctx's cause if ctx ends first (the handoff goes
// on). An empty successor, or the candidate's own name, is refused with
// ErrEmptyName or ErrInvalidSuccessor. The term's Context ends with the
// cause ErrHandedOff; the candidate keeps running and competes again after
// the window.
func (c *Candidate) HandOff(ctx context.Context, successor string) error {
	switch {
	case successor == "":
		return fmt.Errorf("%w: no successor named", ErrEmptyName)
	case successor == c.node:
		return fmt.Errorf("%w: %q is this candidate", ErrInvalidSuccessor, successor)
	}
	term, ok := c.CurrentTerm()
	if !ok {
		return ErrNotLeader
	}
	c.handoff.set(successor)
	if !c.leases.stepDown(c.leases.valid(), endHandedOff) {
		c.handoff.set("")
		return ErrNotLeader // the term ended meanwhile
	}
	c.leases.log.Info("leadership: handing over", "term", term.Token, "to", successor)
	window := time.NewTimer(c.ttl + c.cfg.requestTimeout)
	defer window.Stop()
	for {
		changed := c.viewChanged.wait()
		v := c.view.Load()
		switch {
		case v.Term > term.Token && v.Leader == successor:
			return nil
		case v.Term > term.Token && v.Leader != "":
			return fmt.Errorf("%w: %s leads term %d instead of %s", ErrHandOffFailed, v.Leader, v.Term, successor)
		}
		select {
		case <-changed:
		case <-window.C:
			return fmt.Errorf("%w: %s did not take over within %v", ErrHandOffFailed, successor, c.ttl+c.cfg.requestTimeout)
		case <-c.life.done:
			return fmt.Errorf("%w: the candidate stopped", ErrHandOffFailed)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// successorBox is the successor a handing-over leader names in its
// release, until the engine has written it.
type successorBox struct {
	mu   sync.Mutex
	name string
}

func (b *successorBox) set(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.name = name
}

// take returns the successor named, if any, and forgets it.
func (b *successorBox) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	name := b.name
	b.name = ""
	return name
}
