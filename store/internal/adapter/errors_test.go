package adapter

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kvtools/valkeyrie/store"
)

func TestConfigError(t *testing.T) {
	invalid, other := errors.New("x: invalid configuration"), errors.New("x: other")
	err := error(&ConfigError{Invalid: invalid, Field: "ca", Value: "f.pem", Reason: "cannot read", Err: io.EOF})
	if !errors.Is(err, invalid) || errors.Is(err, other) || !errors.Is(err, io.EOF) {
		t.Fatalf("%v: matches the wrong errors", err)
	}
	if want := `x: invalid configuration: ca "f.pem": cannot read: EOF`; err.Error() != want {
		t.Fatalf("Error() = %q, want %q", err, want)
	}
}

func TestUnreachableError(t *testing.T) {
	err := error(&UnreachableError{Backend: "x", Op: "get", Endpoints: []string{"a:1", "b:2"}, Err: context.DeadlineExceeded})
	if !errors.Is(err, store.ErrNotReachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v: does not match", err)
	}
	if !strings.Contains(err.Error(), "x: get: a:1,b:2 not reachable") {
		t.Fatalf("Error() = %q", err)
	}
	if msg := (&UnreachableError{Backend: "x", Err: io.EOF}).Error(); msg != "x: server not reachable: EOF" {
		t.Fatalf("Error() = %q", msg)
	}
}
