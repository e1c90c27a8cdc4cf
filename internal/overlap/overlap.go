// Package overlap checks "at most one leader at any instant" and "fencing
// tokens only grow" by sampling every candidate of an election as often as
// it can. The root package's tests and the leadershiptest conformance suite
// both use it; it imports neither, so both can.
package overlap

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Participant is one candidate the checker samples.
type Participant struct {
	// Name names the candidate in a violation.
	Name string
	// Term reports the token of the term the candidate leads now, and
	// whether it leads at all. It must be exact at the instant it is
	// called (the engine's CurrentTerm compares the lease's deadline with
	// the clock), so that a sampled overlap is a real one.
	Term func() (token uint64, leads bool)
}

// ErrNoSample is returned by Stop when the checker stopped before taking
// a single sample.
var ErrNoSample = errors.New("overlap: the checker took no sample")

// Checker samples its participants until Stop.
//
// The samples are taken one participant after the other, so two
// participants seen leading in one round could in principle be a handover
// that happened between the two samples. To report only certain overlaps,
// a participant counts as leading throughout the interval between two of
// its consecutive samples that show the same term (a term's lease only
// ever moves later, and every term has a new token); any other participant
// seen leading by a sample taken inside that interval overlapped with it.
type Checker struct {
	ps      []Participant
	every   time.Duration
	stop    chan struct{}
	done    chan struct{}
	started chan struct{} // closed after the first round

	mu      sync.Mutex
	stopped bool
	samples int
	err     error
	tokens  []uint64 // every term seen, in order
}

// Start starts sampling ps, sleeping every (at least a microsecond)
// between two rounds, and returns once the first round of samples is
// taken. In a testing/synctest bubble the sleep moves the bubble's clock,
// and a sampler that never slept would keep the bubble from ever being
// idle: choose every well below the shortest lease of the test.
func Start(every time.Duration, ps ...Participant) *Checker {
	every = max(every, time.Microsecond)
	c := &Checker{ps: ps, every: every, stop: make(chan struct{}), done: make(chan struct{}), started: make(chan struct{})}
	go c.run()
	<-c.started
	return c
}

func (c *Checker) run() {
	defer close(c.done)
	n := len(c.ps)
	last := make([]uint64, n)    // token at the latest sample, 0 when not leading
	lastTok := make([]uint64, n) // latest nonzero token seen
	var maxTok uint64
	for round := 0; ; round++ {
		select {
		case <-c.stop:
			if round == 0 {
				close(c.started)
			}
			return
		default:
		}
		for i, p := range c.ps {
			tok, leads := p.Term()
			if !leads {
				tok = 0
			}
			c.mu.Lock()
			c.samples++
			if tok != 0 && tok != lastTok[i] {
				// A term not seen before: its token must be above every
				// token seen so far.
				if tok <= maxTok && c.err == nil {
					c.err = fmt.Errorf("%s leads term %d after term %d was seen: fencing tokens went backwards, or two leaders overlapped", p.Name, tok, maxTok)
				}
				maxTok = max(maxTok, tok)
				lastTok[i] = tok
				c.tokens = append(c.tokens, tok)
			}
			if tok != 0 && round > 0 && tok == last[i] {
				for j, t := range last {
					if j != i && t != 0 && c.err == nil {
						c.err = fmt.Errorf("two leaders at once: %s (term %d) and %s (term %d)", p.Name, tok, c.ps[j].Name, t)
					}
				}
			}
			c.mu.Unlock()
			last[i] = tok
		}
		if round == 0 {
			close(c.started)
		}
		time.Sleep(c.every)
	}
}

// Stop stops the sampler, waits for it, and returns the first violation
// seen, or ErrNoSample, or nil. It may be called more than once; every
// call returns the same answer.
func (c *Checker) Stop() error {
	c.mu.Lock()
	if !c.stopped {
		c.stopped = true
		close(c.stop)
	}
	c.mu.Unlock()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if c.samples == 0 {
		return ErrNoSample
	}
	return nil
}

// Err is the first violation seen so far, or nil; the sampler goes on.
func (c *Checker) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Samples is the number of samples taken so far.
func (c *Checker) Samples() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.samples
}

// Tokens returns every term seen so far, in the order first seen.
func (c *Checker) Tokens() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]uint64(nil), c.tokens...)
}
