package leadership

// The simulator's handles: the participants of a run are spread over one
// or two handles, as the processes of a deployment hold several
// participants each (bench --scale runs two candidates and a follower of
// every election on one handle). A handle's calls made close together
// share a batch, as the adapters of etcd, PostgreSQL and Consul send the
// calls made at once as one request (docs/scale.md), so one fault can
// strike all of them: a batch partly applied, lost whole, hung, or
// applied after its senders gave up (and perhaps stepped down). The
// driver also pauses a whole handle past its TTL (sim_test.go,
// actPauseHandle): every leader on it must step down at its deadline.

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// batchFault is what strikes every call of one batch.
type batchFault int

const (
	batchPartial batchFault = iota // each call applied or not by its own draw; every caller gets an error
	batchLost                      // none applied, every caller gets an error at once
	batchHung                      // the batch hangs ignoring the callers' contexts, then is applied and answered
	batchLate                      // the callers give up; the writes are applied later
)

func (b batchFault) String() string {
	return [...]string{"partly applied", "lost", "hung", "applied late"}[b]
}

// simBatch is one handle's batching: the batch open now takes every call
// of the handle's participants made before until.
type simBatch struct {
	handle int

	mu    sync.Mutex
	rng   *rand.Rand
	until time.Time
	kind  batchFault
	n     int // batches struck so far, to name them in the log
	size  int // calls in the open batch
}

// newSimBatches makes the run's handles, each with its own stream.
func newSimBatches(seed uint64, n int) []*simBatch {
	out := make([]*simBatch, n)
	for i := range out {
		out[i] = &simBatch{handle: i, rng: rand.New(rand.NewPCG(seed, 0xba7c<<16|uint64(i)))}
	}
	return out
}

// join draws the batch fault of a call made now while the plan is faulty:
// the call joins the batch open at this time, or opens one with chance p
// (its window up to maxTTL/20 long). It reports false for a call that no
// batch fault strikes.
func (b *simBatch) join(s *simStore, op string, write bool, p float64, maxTTL time.Duration) (simFault, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if !now.Before(b.until) {
		if b.rng.Float64() >= p {
			return faultNone, false
		}
		b.n++
		b.until = now.Add(time.Millisecond + randBetween(b.rng, 0, maxTTL/20))
		b.kind = batchFault(b.rng.IntN(4))
		b.size = 0
	}
	if b.size++; b.size == 2 {
		s.run.shared.Add(1)
	}
	f := b.member(write)
	s.run.batched.Add(1)
	s.run.fault(s.who, "%s in batch %s of handle %d (%s): %s", op, b.name(), b.handle, b.kind, f)
	return f, true
}

// member is the fault of one call of the open batch.
func (b *simBatch) member(write bool) simFault {
	switch b.kind {
	case batchPartial:
		if b.rng.Float64() < 0.5 {
			return faultLostReply // applied, the reply lost
		}
		return faultFail
	case batchLost:
		return faultFail
	case batchHung:
		return faultHang
	default:
		if write {
			return faultLateApply
		}
		return faultLostReply // a read that arrives late shows no one anything
	}
}

func (b *simBatch) name() string { return fmt.Sprintf("#%d", b.n) }
