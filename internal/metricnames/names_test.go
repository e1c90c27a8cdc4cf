package metricnames

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/leadership-go/leadership"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReason(t *testing.T) {
	for r, want := range map[leadership.Reason]string{
		leadership.ErrResigned:       "resigned",
		leadership.ErrRelinquished:   "relinquished",
		leadership.ErrLeaseExpired:   "lease_expired",
		leadership.ErrLostLeadership: "lost",
		leadership.ErrElectionEnded:  "election_ended",
		leadership.ErrStopped:        "stopped",
		leadership.ErrHandedOff:      "handed_off",
	} {
		if got := Reason(r); got != want {
			t.Errorf("Reason(%v) = %q, want %q", r, got, want)
		}
	}
}
