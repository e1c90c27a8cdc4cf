package demo

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The errors Run returns are told apart by their type, with errors.As.

// ConfigError names a bad setting of Config.
type ConfigError struct {
	Field  string // candidates, ttl, key or proxy (the flags' names)
	Value  string // the value as the user wrote it
	Reason string
}

// Error describes the error as "FIELD VALUE: REASON".
func (e *ConfigError) Error() string { return e.Field + " " + e.Value + ": " + e.Reason }

// MissingEventError says what the demo waited for in vain.
type MissingEventError struct {
	What  string        // what did not happen, such as "a first leader"
	Limit time.Duration // how long after the start it had to happen
	Err   error         // why the wait ended: context.DeadlineExceeded, or the caller's cancellation
}

// Error describes the error.
func (e *MissingEventError) Error() string {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return fmt.Sprintf("missing: %s did not happen within %v of the start (10 x TTL + 10s)", e.What, e.Limit)
	}
	return fmt.Sprintf("missing: %s: %v", e.What, e.Err)
}

// Unwrap returns why the wait ended.
func (e *MissingEventError) Unwrap() error { return e.Err }

// ViolationError describes a broken guarantee: two leaders at once, a
// fencing token that did not grow, a request not answered by the leader.
type ViolationError struct {
	What string
}

// Error describes the violation.
func (e *ViolationError) Error() string { return e.What }

// violationf formats a *ViolationError.
func violationf(format string, a ...any) error {
	return &ViolationError{What: fmt.Sprintf(format, a...)}
}
