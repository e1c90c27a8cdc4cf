// Package batch is the queue behind the batched calls of store/consul (Gets
// and compare-and-swaps as Consul transactions) and store/postgres (reads,
// compare-and-swaps and creates as single statements over arrays): calls
// of one kind wait in a Queue, and a few senders take them out in batches,
// as many as fit, and run each batch as one request.
//
// Alone when the store is idle, a call goes in a batch of its own; when
// calls come faster than requests return, those waiting meanwhile go
// together in the next one.
package batch

import (
	"context"
	"sync"
	"time"
)

// Call is what the queue needs of a call, embedded in each store's own
// call type: its context, its key, what it adds to a batch's size, and the
// channel its result is sent on (capacity 1, made by the store).
type Call[R any] struct {
	Ctx  context.Context
	Key  string
	Size int
	Done chan R
}

// call returns c: through embedding, it gives the Queue the Call of a
// store's call type.
func (c *Call[R]) call() *Call[R] { return c }

// Caller is a store's call type, which embeds a Call.
type Caller[R any] interface {
	call() *Call[R]
}

// Limits bound the batches of a Queue.
type Limits struct {
	// MaxCalls and MaxBytes bound a batch: at most MaxCalls calls, whose
	// Sizes add up to at most MaxBytes unless a call is alone.
	MaxCalls, MaxBytes int
	// MaxSenders is how many batches run at once.
	MaxSenders int
}

// Queue holds the calls waiting for a batch, and counts the senders
// taking them out.
type Queue[C Caller[R], R any] struct {
	Limits
	// Distinct: a batch holds at most one call per key (another call on a
	// key already in the batch waits for the next one).
	Distinct bool
	// Ended is the result of a call whose context ended: its error.
	Ended func(err error) R
	// Run runs a batch and sends each call its result.
	Run func(batch []C)

	mu      sync.Mutex
	queue   []C
	senders int
}

// Push queues c and reports whether a sender must be started (its place is
// then taken: the caller must start Send).
func (q *Queue[C, R]) Push(c C) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(q.queue, c)
	if q.senders >= q.MaxSenders {
		return false
	}
	q.senders++
	return true
}

// PushStart queues c and, when fewer than MaxSenders run, starts one with
// start (which runs Send in a goroutine). When start fails (the store is
// closed), c is taken out again and PushStart returns false.
func (q *Queue[C, R]) PushStart(c C, start func(send func()) bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(q.queue, c)
	if q.senders < q.MaxSenders {
		if !start(q.Send) {
			q.queue = q.queue[:len(q.queue)-1]
			return false
		}
		q.senders++
	}
	return true
}

// Requeue puts calls back at the head of the queue: first in line for the
// next batch.
func (q *Queue[C, R]) Requeue(calls []C) {
	q.mu.Lock()
	q.queue = append(calls, q.queue...)
	q.mu.Unlock()
}

// Wait returns c's result, or at once when c's context ends first, Ended
// of its error (the call may still run: a write's outcome is then
// unknown, as for any call cut short).
func (q *Queue[C, R]) Wait(c C) R {
	cc := c.call()
	select {
	case r := <-cc.Done:
		return r
	case <-cc.Ctx.Done():
		select {
		case r := <-cc.Done: // finished at the same moment: the result stands
			return r
		default:
		}
		return q.Ended(cc.Ctx.Err())
	}
}

// Send runs batches while calls are waiting, and then gives up its place.
func (q *Queue[C, R]) Send() {
	for {
		q.mu.Lock()
		batch := q.take()
		if len(batch) == 0 {
			q.senders--
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		q.Run(batch)
	}
}

// take removes the next batch from the queue: calls whose context ended
// are answered (Ended) and dropped, and the others go in as the limits
// allow, in order. It looks at the head of the queue only, never the
// whole of it: under a load the store cannot keep up with, the queue
// grows, and a scan of all of it for every batch would make each batch
// slower the longer the queue, the queue longer the slower each batch.
func (q *Queue[C, R]) take() []C {
	var batch, skipped []C
	var keys map[string]bool
	if q.Distinct {
		keys = map[string]bool{}
	}
	size, i := 0, 0
	for ; i < len(q.queue) && len(batch) < q.MaxCalls && len(skipped) < q.MaxCalls; i++ {
		c := q.queue[i]
		cc := c.call()
		if err := cc.Ctx.Err(); err != nil {
			cc.Done <- q.Ended(err)
			continue
		}
		if (q.Distinct && keys[cc.Key]) || (len(batch) > 0 && size+cc.Size > q.MaxBytes) {
			skipped = append(skipped, c) // for the next batch, still in order
			continue
		}
		if q.Distinct {
			keys[cc.Key] = true
		}
		size += cc.Size
		batch = append(batch, c)
	}
	// The skipped calls go back in front of the rest, in the room the
	// calls taken or dropped leave; the room before them is cleared.
	start := i - len(skipped)
	copy(q.queue[start:i], skipped)
	clear(q.queue[:start])
	q.queue = q.queue[start:]
	if len(q.queue) == 0 {
		q.queue = nil
	}
	return batch
}

// Do queues c, starts a sender if fewer than MaxSenders run, and waits
// for c's result (or its context's end, as Wait does).
func (q *Queue[C, R]) Do(c C) R {
	if q.Push(c) {
		go q.Send()
	}
	return q.Wait(c)
}

// Context bounds a batch's one request by the latest deadline of its
// calls, or fallback from now if one has none. It is not cancelled when
// one caller gives up: the others still want the request.
func Context[C Caller[R], R any](calls []C, fallback time.Duration) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, c := range calls {
		d, ok := c.call().Ctx.Deadline()
		if !ok {
			d = time.Now().Add(fallback)
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.Background(), latest)
}
