package leadership

import (
	"context"
	"fmt"
	"sync"

	"github.com/kvtools/valkeyrie/store"
)

// MaxValueSize is the largest value a candidate can publish beside its
// name (Proclaim, WithValue), in bytes: the value travels in every write of
// the record and every watch event.
const MaxValueSize = 1024

// Proclaim publishes value beside the candidate's name, as etcd's
// Election.Proclaim: an address to route to, a version. Followers see it in
// Status.Value; it is written into the record without starting a new
// term, and every later term of this candidate carries it too.
//
// A leader returns once the store confirmed a write carrying value, or
// with the cause of its term's end (a Reason) if the term ends first,
// or ctx's cause if ctx ends first. A candidate that does
// not lead keeps the value for its next term and returns ErrNotLeader. A
// value longer than MaxValueSize is refused with ErrInvalidOption (an
// *OptionError naming "value").
func (c *Candidate) Proclaim(ctx context.Context, value string) error {
	if len(value) > MaxValueSize {
		return &OptionError{Option: "value", Reason: fmt.Sprintf("%d bytes, at most %d", len(value), MaxValueSize)}
	}
	c.values.set(value)
	poke(c.leases.wake)
	for {
		written := c.values.changed.wait()
		term, ok := c.CurrentTerm()
		if !ok {
			return ErrNotLeader
		}
		if v, ok := c.values.confirmedFor(term.Token); ok && v == value {
			return nil
		}
		select {
		case <-written:
		case <-term.Context().Done():
			return context.Cause(term.Context())
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// WithValue sets the value a candidate publishes beside its name from its
// first term on (see Proclaim). Candidates only: a follower given it
// refuses to start (ErrInvalidOption). A value longer than MaxValueSize is
// refused (ErrInvalidOption).
func WithValue(value string) Option {
	return candidateOnly("WithValue", func(c *config) {
		if len(value) > MaxValueSize {
			c.refuse("WithValue", fmt.Sprintf("%d bytes, at most %d", len(value), MaxValueSize))
		}
		c.value = value
	})
}

// proclamation is the value a candidate publishes and the last one the
// store confirmed in its record. The Candidate sets it, the engine writes
// it.
type proclamation struct {
	mu        sync.Mutex
	want      string // the value to publish
	confirmed string // the value of the last confirmed write
	term      uint64 // the term of that write
	last      lastWriteOf
	changed   broadcast // notified after every confirmed write
}

func (p *proclamation) set(v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.want = v
}

// wanted is the value the engine writes.
func (p *proclamation) wanted() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.want
}

// wrote records that the store confirmed a write of term carrying v, of
// the campaign id, stored as pair.
func (p *proclamation) wrote(term uint64, v, id string, pair *store.KVPair) {
	p.mu.Lock()
	p.confirmed, p.term, p.last = v, term, lastWriteOf{pair: pair, id: id}
	p.mu.Unlock()
	p.changed.notify()
}

// lastWrite is the record as the store confirmed the last write of term,
// and the campaign id that wrote it, if term is the last one written.
func (p *proclamation) lastWrite(term uint64) (*store.KVPair, string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.term != term || p.last.pair == nil {
		return nil, "", false
	}
	return p.last.pair, p.last.id, true
}

// confirmedFor is the value of the last confirmed write of term, if any.
func (p *proclamation) confirmedFor(term uint64) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.confirmed, p.term == term
}
