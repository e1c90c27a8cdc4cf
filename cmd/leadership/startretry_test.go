package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership"
)

// A store that does not answer run's first read is retried, each failure
// logged; other errors end run at once; --try bounds the retries; the
// command's end (SIGTERM) while retrying, or while opening, is exit 0.
func TestStartUntilRead(t *testing.T) {
	slow := fmt.Errorf("cannot read the election: %w: %w", leadership.ErrStore, store.ErrNotReachable)
	var log syncBuffer
	lg := &logger{w: &log, prefix: "leadership run: n: "}
	calls := 0
	err := startUntilRead(context.Background(), func() error {
		if calls++; calls < 3 {
			return slow
		}
		return nil
	}, 0, lg)
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls, want nil after 3", err, calls)
	}
	if n := len(linesWith(log.String(), "cannot read the election")); n != 2 {
		t.Errorf("%d failures logged, want 2:\n%s", n, log.String())
	}

	denied := fmt.Errorf("cannot read the election: %w: permission denied", leadership.ErrStore)
	calls = 0
	if err := startUntilRead(context.Background(), func() error { calls++; return denied }, 0, lg); !errors.Is(err, denied) || calls != 1 {
		t.Errorf("a refusal: %v after %d calls, want it at once", err, calls)
	}
	usage := usageErrorf("--key: empty")
	calls = 0
	if err := startUntilRead(context.Background(), func() error { calls++; return usage }, 0, lg); !errors.Is(err, usage) || calls != 1 {
		t.Errorf("a usage error: %v after %d calls, want it at once", err, calls)
	}

	err = startUntilRead(context.Background(), func() error { return slow }, 100*time.Millisecond, lg)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitNotElected || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("--try ran out: %v, want exit %d", err, exitNotElected)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := startUntilRead(ctx, func() error { return slow }, 0, lg); !errors.As(err, &ee) || ee.code != exitOK || ee.err != nil {
		t.Errorf("ctx ended: %v, want exit %d with nothing more printed", err, exitOK)
	}
	// Stopped while opening: the open fails with the stop's error, which
	// is not the store's failure.
	if err := startUntilRead(ctx, func() error { return fmt.Errorf("cannot open: %w", context.Canceled) }, 0, lg); !errors.As(err, &ee) || ee.code != exitOK {
		t.Errorf("stopped while opening: %v, want exit %d", err, exitOK)
	}
	if n := len(linesWith(log.String(), "stopped before the store answered")); n != 2 {
		t.Errorf("%d stops logged, want 2:\n%s", n, log.String())
	}
}
