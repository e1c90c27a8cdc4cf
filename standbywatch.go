package leadership

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/internal/electionrecord"
)

// claimWatcher keeps, for a candidate that has led with WithStandby, the
// latest standby claim of its election: a watch on the claim key, with a
// read before each open. A release then writes the next term for
// the claimant at once, without reading the claim first. What it knows is
// a hint, as every watch is here: a claim it missed or kept too long only
// picks another successor, or one that is gone (waited out like a crash),
// never a second leader.
type claimWatcher struct {
	client  Backend
	key     string
	timeout time.Duration
	retry   time.Duration
	clock   func() time.Duration       // the candidate's time axis
	known   atomic.Pointer[knownClaim] // nil: the key not read yet
	last    *knownClaim                // what run learned last, kept over reopens; run's own
	cancel  context.CancelFunc
	done    chan struct{}
}

// knownClaim is the claim key's state: a claim, or none (c nil), when the
// watcher learned it was written (claimAgeUnknown: it cannot tell), and
// the last moment the watcher knew the key held it: a claim other than c
// was written after told.
type knownClaim struct {
	c    *claim
	at   time.Duration
	told time.Duration
}

// claimAgeUnknown dates a claim first seen by a read: it may be as old as
// the key. Far enough in the past to be stale by any rule, far enough from
// the limit that subtracting it from a clock reading cannot overflow.
const claimAgeUnknown = time.Duration(-1 << 62)

// startClaimWatcher watches key's claims until stop.
func startClaimWatcher(client Backend, key string, cfg *config, clock func() time.Duration) *claimWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &claimWatcher{client: client, key: key, timeout: cfg.requestTimeout, retry: cfg.retryMax, clock: clock,
		cancel: cancel, done: make(chan struct{})}
	go w.run(ctx)
	return w
}

// latest is the claim key's state as the watcher last learned it, if it
// has read the key yet.
func (w *claimWatcher) latest() (k *knownClaim, ok bool) {
	k = w.known.Load()
	return k, k != nil
}

// stop ends the watch; wait waits for its goroutine to end, which takes
// at most one request timeout after stop.
func (w *claimWatcher) stop() { w.cancel() }

func (w *claimWatcher) wait() { <-w.done }

func (w *claimWatcher) run(ctx context.Context) {
	defer close(w.done)
	kw := keyWatch{client: w.client, key: w.key}
	defer kw.close(w.timeout)
	for ctx.Err() == nil {
		// The read comes before the watch opens: a watch that first sends
		// the key's current state then sends it as it was at the open,
		// which is the state read or a later one. What the read showed is
		// told at once: a release made before the watch opens reads a
		// claim written since (standbyClaim). While the watch is down, the
		// last state stays, dated as it was learned.
		if seeded, ok := w.seed(ctx); ok {
			w.known.Store(seeded)
			if kw.start(ctx, w.timeout) == nil {
				w.follow(ctx, kw.events)
				if ctx.Err() == nil {
					kw.ended()
				}
			}
		}
		w.pause(ctx)
	}
}

// seed reads the claim key before the watch opens.
func (w *claimWatcher) seed(ctx context.Context) (*knownClaim, bool) {
	rctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	sent := w.clock()
	pair, err := getKey(rctx, w.client, w.key)
	switch {
	case errors.Is(err, store.ErrKeyNotFound):
		return w.learn(nil, false, sent), true
	case err == nil:
		return w.learn(pair, false, sent), true
	}
	return nil, false
}

// follow takes the watch's events until it ends or ctx does.
func (w *claimWatcher) follow(ctx context.Context, events <-chan *store.KVPair) {
	for {
		select {
		case <-ctx.Done():
			return
		case p, ok := <-events:
			if !ok {
				return
			}
			w.known.Store(w.learn(p, true, w.clock()))
		}
	}
}

// learn dates what a read sent at told or an event arrived at told showed
// (nil or empty: no claim). A
// claim already known keeps the date it was first learned; one first shown
// by an event was written after the watch opened (or after the read that
// preceded the open), so it is dated now; one first shown by a read may
// have been written at any time before it (its candidate long gone): its
// age is unknown until a new claim replaces it.
func (w *claimWatcher) learn(p *store.KVPair, byEvent bool, told time.Duration) *knownClaim {
	k := &knownClaim{at: claimAgeUnknown, told: told}
	if p != nil {
		if c, ok := electionrecord.DecodeClaim(p.Value); ok {
			k.c = &c
		}
	}
	switch {
	case w.last != nil && sameClaim(w.last.c, k.c):
		k.at = w.last.at
	case byEvent:
		k.at = w.clock()
	}
	w.last = k
	return k
}

// sameClaim reports whether a and b are the same claim write, or both none.
func sameClaim(a, b *claim) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Nonce == b.Nonce
}

// pause waits before the watch is opened again.
func (w *claimWatcher) pause(ctx context.Context) {
	t := time.NewTimer(w.retry)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
