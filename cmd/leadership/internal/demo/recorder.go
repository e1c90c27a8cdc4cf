package demo

import (
	"context"
	"sync"
	"time"
)

// eventKind is what a recorded event is about.
type eventKind int

const (
	evElected    eventKind = iota // a candidate's elected channel delivered true
	evUnelected                   // a candidate's elected channel delivered false
	evStepDown                    // the context of a candidate's term ended
	evFollower                    // the follower reported a leader ("" for none)
	evStoreError                  // a candidate's or the follower's error channel delivered
	evNote                        // something the demo itself did
	evProxy                       // a request through the proxy got a new kind of answer
)

// event is one timestamped thing that happened during the demo.
type event struct {
	at     time.Duration // since the start of the demo, when it was recorded
	kind   eventKind
	node   string // the candidate, "" for the follower
	leader string // evFollower: the leader reported
	token  uint64 // evElected, evStepDown: the term's fencing token
	text   string // evNote: what was done; evStoreError: the error; evProxy: the answer
}

// recorder collects events from every goroutine of the demo in the order
// they happen, and lets the demo wait for one.
type recorder struct {
	start time.Time

	mu      sync.Mutex
	events  []event
	changed chan struct{} // closed and replaced on every new event
}

// newRecorder returns a recorder whose clock starts now.
func newRecorder() *recorder {
	return &recorder{start: time.Now(), changed: make(chan struct{})}
}

// add timestamps e, records it and returns it as recorded.
func (r *recorder) add(e event) event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.at = time.Since(r.start)
	r.events = append(r.events, e)
	close(r.changed)
	r.changed = make(chan struct{})
	return e
}

// mark returns the index the next event will have.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// between returns a copy of the events with indexes in [from, to); to < 0
// means up to the last one.
func (r *recorder) between(from, to int) []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if to < 0 || to > len(r.events) {
		to = len(r.events)
	}
	if from >= to {
		return nil
	}
	return append([]event(nil), r.events[from:to]...)
}

// waitFor returns the first event at index from or later that matches,
// with its index, waiting for it until ctx ends.
func (r *recorder) waitFor(ctx context.Context, from int, match func(event) bool) (event, int, error) {
	for {
		r.mu.Lock()
		for i := from; i < len(r.events); i++ {
			if match(r.events[i]) {
				e := r.events[i]
				r.mu.Unlock()
				return e, i, nil
			}
		}
		from = len(r.events)
		changed := r.changed
		r.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return event{}, -1, ctx.Err()
		}
	}
}
