package leadership

import (
	"context"
	"fmt"
	"sync"
)

// HandOff ends the candidate's term and releases the record to the
// candidate named successor: for a window of the candidate's TTL only that
// candidate may take the next term, then anyone may. The successor takes
// it as soon as it sees the release (milliseconds with a working watch);
// the others wait out the window on their own clocks. Tokens keep growing:
// the successor's term is a new one. This is the graceful handoff that
// client-go offers only as an alpha.
//
// HandOff returns nil once this candidate sees the successor's term in the
// store: the successor's acquiring write has landed, so no one else can
// lead that term. The successor's own IsLeader turns true when the reply to
// that write reaches it, which may be a moment before or after HandOff
// returns (their processes see the store at different instants); wait on
// the successor itself where that matters. HandOff returns
// ErrHandOffFailed if another candidate led instead, or no one within the
// window (leadership was released all the same); ErrNotLeader if the
// candidate does not lead; ErrHandOffInProgress to a second HandOff made
// while one is under way (the first one's successor stands); ctx's cause
// if ctx ends first (the handoff goes on). An empty successor, or the
// candidate's own name, is refused with ErrEmptyName or
// ErrInvalidOption (an *OptionError naming "successor"). The term's Context ends with the cause
// ErrHandedOff; the candidate keeps running and competes again after the
// window.
func (c *Candidate) HandOff(ctx context.Context, successor string) error {
	switch {
	case successor == "":
		return fmt.Errorf("%w: no successor named", ErrEmptyName)
	case successor == c.node:
		return &OptionError{Option: "successor", Reason: fmt.Sprintf("%q is this candidate", successor)}
	}
	term, ok := c.CurrentTerm()
	if !ok {
		return ErrNotLeader
	}
	if busy, ok := c.handoff.offer(successor, func() bool {
		l := c.leases.valid()
		if l == nil || l.term.Token != term.Token {
			return false // the term checked ended meanwhile, perhaps for a new one
		}
		return c.leases.stepDown(l, ErrHandedOff)
	}); !ok {
		if busy != "" {
			return fmt.Errorf("%w: to %q", ErrHandOffInProgress, busy)
		}
		return ErrNotLeader // the term ended meanwhile
	}
	c.leases.log.Info("leadership: handing over", "term", term.Token, "to", successor)
	window := c.cfg.clock.NewTimer(c.ttl + c.cfg.requestTimeout)
	defer window.Stop()
	for {
		changed := c.viewChanged.wait()
		v := c.view.Load()
		switch {
		case v.Token > term.Token && v.Leader == successor:
			return nil
		case v.Token > term.Token && v.Leader != "":
			return fmt.Errorf("%w: %s leads term %d instead of %s", ErrHandOffFailed, v.Leader, v.Token, successor)
		}
		select {
		case <-changed:
		case <-window.C():
			return fmt.Errorf("%w: %s did not take over within %v", ErrHandOffFailed, successor, c.ttl+c.cfg.requestTimeout)
		case <-c.life.done:
			return fmt.Errorf("%w: the candidate stopped", ErrHandOffFailed)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// successorBox is the successor a handing-over leader names in its
// release, until the engine has written it. One handoff at a time: a
// second offer while a successor waits to be written is refused.
type successorBox struct {
	mu   sync.Mutex
	name string
}

// offer names successor and ends the term by stepDown, as one step that no
// other offer interleaves with. It returns the successor already named
// (busy) if a handoff is under way, and ok false if either that or
// stepDown found no term to end; then nothing is named.
func (b *successorBox) offer(successor string, stepDown func() bool) (busy string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.name != "" {
		return b.name, false
	}
	b.name = successor
	if !stepDown() {
		b.name = ""
		return "", false
	}
	return "", true
}

// take returns the successor named, if any, and forgets it.
func (b *successorBox) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	name := b.name
	b.name = ""
	return name
}
