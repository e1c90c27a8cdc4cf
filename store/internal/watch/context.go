package watch

import "context"

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
