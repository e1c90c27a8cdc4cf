package metricnames

import (
	"errors"
	"fmt"
	"testing"

	"go.uber.org/goleak"

	"github.com/leadership-go/leadership"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReason(t *testing.T) {
	for err, want := range map[error]string{
		leadership.ErrResigned:                      "resigned",
		leadership.ErrRelinquished:                  "relinquished",
		leadership.ErrLeaseExpired:                  "lease_expired",
		leadership.ErrLostLeadership:                "lost",
		leadership.ErrElectionEnded:                 "election_ended",
		leadership.ErrStopped:                       "stopped",
		leadership.ErrHandedOff:                     "handed_off",
		fmt.Errorf("x: %w", leadership.ErrResigned): "resigned",
		errors.New("something else"):                "other",
	} {
		if got := Reason(err); got != want {
			t.Errorf("Reason(%v) = %q, want %q", err, got, want)
		}
	}
}
