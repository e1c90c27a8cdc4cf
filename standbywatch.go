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
// latest standby claim of its election: a watch on the claim key, seeded
// by a read each time it opens. A release then writes the next term for
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
	known   atomic.Pointer[knownClaim] // nil: the watch is not working
	cancel  context.CancelFunc
	done    chan struct{}
}

// knownClaim is the claim key's state: a claim, or none (c nil), and when
// the watcher learned it.
type knownClaim struct {
	c  *claim
	at time.Duration
}

// startClaimWatcher watches key's claims until stop.
func startClaimWatcher(client Backend, key string, cfg *config, clock func() time.Duration) *claimWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &claimWatcher{client: client, key: key, timeout: cfg.requestTimeout, retry: cfg.retryMax, clock: clock,
		cancel: cancel, done: make(chan struct{})}
	go w.run(ctx)
	return w
}

// latest is the claim key's state as the watch last told, and when, if the
// watch works.
func (w *claimWatcher) latest() (c *claim, at time.Duration, ok bool) {
	k := w.known.Load()
	if k == nil {
		return nil, 0, false
	}
	return k.c, k.at, true
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
		if err := kw.start(ctx, w.timeout); err != nil {
			w.pause(ctx)
			continue
		}
		w.seed(ctx)
		w.follow(ctx, kw.events)
		w.known.Store(nil)
		if ctx.Err() == nil {
			kw.ended()
			w.pause(ctx)
		}
	}
}

// seed reads the claim key once the watch is open.
func (w *claimWatcher) seed(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	pair, err := getKey(rctx, w.client, w.key)
	switch {
	case errors.Is(err, store.ErrKeyNotFound):
		w.note(nil)
	case err == nil:
		w.note(pair)
	}
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
			w.note(p)
		}
	}
}

// note records what a read or an event showed (nil or empty: no claim).
func (w *claimWatcher) note(p *store.KVPair) {
	k := &knownClaim{at: w.clock()}
	if p != nil {
		if c, ok := electionrecord.DecodeClaim(p.Value); ok {
			k.c = &c
		}
	}
	w.known.Store(k)
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
