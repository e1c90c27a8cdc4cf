package adapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// OpenDeadline is when an Open bounded by dial must be done: dial from
// now, or ctx's deadline if that is sooner. When ctx is already done it
// returns ctx's error instead, and the Open ends there.
func OpenDeadline(ctx context.Context, dial time.Duration) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	deadline := time.Now().Add(dial)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return deadline, nil
}

// OpenError classifies a failure err of backend's Open of endpoints:
// ctx's error when ctx was cancelled; an *UnreachableError naming
// endpoints when unreachable(err); else err, prefixed with the backend and
// the endpoints.
func OpenError(ctx context.Context, backend string, endpoints []string, err error, unreachable func(error) bool) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	var already *UnreachableError
	if errors.As(err, &already) {
		return err
	}
	if unreachable(err) {
		return &UnreachableError{Backend: backend, Endpoints: endpoints, Err: err}
	}
	return fmt.Errorf("%s: open %s: %w", backend, strings.Join(endpoints, ","), err)
}
