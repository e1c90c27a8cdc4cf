package leadership

import (
	"context"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// keyWatch keeps a store watch on the election key. Its events are only
// hints: they wake the engine early and are ordered against what it already
// knows, but no decision rests on a watch alone. When the backend's watch
// fails or ends, the engine polls until keyWatch manages to restart it.
type keyWatch struct {
	client Backend
	key    string
	clk    timeSource // times close's grace
	cancel context.CancelFunc
	events <-chan *store.KVPair
	drains sync.WaitGroup // goroutines draining cancelled watches
}

// running reports whether a watch is open.
func (w *keyWatch) running() bool { return w.events != nil }

// start opens the watch under parent; the call is abandoned after timeout.
// A failure leaves it stopped.
func (w *keyWatch) start(parent context.Context, timeout time.Duration) error {
	w.stop()
	ctx, cancel := context.WithCancel(parent)
	callCtx, callDone := context.WithTimeout(parent, timeout)
	ch, err := watchKey(callCtx, ctx, cancel, w.client, w.key)
	callDone()
	if err != nil {
		cancel()
		return err
	}
	if ch == nil {
		cancel()
		return store.ErrCallNotSupported
	}
	w.cancel, w.events = cancel, ch
	return nil
}

// ended forgets a watch whose channel the backend closed.
func (w *keyWatch) ended() {
	w.cancel()
	w.cancel, w.events = nil, nil
}

// stop cancels the watch and drains its channel in the background, so that
// a backend that sends without watching its context can still finish.
func (w *keyWatch) stop() {
	if w.events == nil {
		return
	}
	w.cancel()
	ch := w.events
	w.drains.Go(func() {
		for range ch {
		}
	})
	w.cancel, w.events = nil, nil
}

// close stops the watch and waits up to grace for the backend to close the
// channels it was given.
func (w *keyWatch) close(grace time.Duration) {
	w.stop()
	done := make(chan struct{})
	go func() {
		w.drains.Wait()
		close(done)
	}()
	t := w.clk.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C():
	}
}
