package watch

import (
	"context"
	"errors"
	"time"
)

// Send delivers v on ch unless ctx ends first, and reports whether it did.
func Send[T any](ctx context.Context, ch chan<- T, v T) bool {
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

// Joined returns a context that ends with ctx or with also, whichever ends
// first (a call's context and its store's lifetime, say). The cancel
// function releases both links.
func Joined(ctx, also context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(also, cancel)
	return c, func() { stop(); cancel() }
}

// errSlept ends the context of a Sleep that lasted its whole duration.
var errSlept = errors.New("watch: slept")

// Sleep waits d, or until ctx ends, and reports whether all of d passed
// (false: ctx ended first). It is the pause of a retry or poll loop that
// must stop with its context.
func Sleep(ctx context.Context, d time.Duration) bool {
	sctx, cancel := context.WithTimeoutCause(ctx, d, errSlept)
	defer cancel()
	<-sctx.Done()
	return context.Cause(sctx) == errSlept //nolint:errorlint // errSlept itself, never wrapped
}
