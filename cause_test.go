package leadership

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The cause of a term's context says why the term ended, for every way a
// term can end.
func TestTermContextCauseSaysWhy(t *testing.T) {
	cases := []struct {
		name string
		opts []Option
		end  func(t *testing.T, c *cluster, r *runner, cancel context.CancelFunc)
		want error
	}{
		{"resign", nil, func(_ *testing.T, _ *cluster, r *runner, _ context.CancelFunc) { r.Resign() }, ErrResigned},
		{"relinquish", []Option{WithRelinquishSchedule("@every 200ms")}, func(*testing.T, *cluster, *runner, context.CancelFunc) {}, ErrRelinquished},
		{"stop", nil, func(_ *testing.T, _ *cluster, r *runner, _ context.CancelFunc) { r.Stop() }, ErrStopped},
		{"context", nil, func(_ *testing.T, _ *cluster, _ *runner, cancel context.CancelFunc) { cancel() }, ErrStopped},
		{"end", nil, func(t *testing.T, _ *cluster, r *runner, _ context.CancelFunc) {
			if err := EndElection(ctxT(t), r.client, r.key); err != nil {
				t.Fatal(err)
			}
		}, ErrElectionEnded},
		{"deadline", nil, func(_ *testing.T, c *cluster, _ *runner, _ context.CancelFunc) { stopServer(c.name) }, ErrLeaseExpired},
		{"lost", nil, func(t *testing.T, c *cluster, r *runner, _ context.CancelFunc) {
			// Another writer takes the record over with a later term.
			rec := recordOf(t, c.handle(), "cause")
			rec.Leader, rec.ID, rec.Term, rec.Seq = "usurper", "other-id", rec.Term+1, 0
			if err := c.handle().Put(ctxT(t), "cause", rec.Stamp(), nil); err != nil {
				t.Fatal(err)
			}
		}, ErrLostLeadership},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				cand := NewCandidate(c.handle(), "cause", "a", time.Second, tc.opts...)
				el, errs, err := cand.runUnder(ctx)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(cand.Stop)
				r := &runner{Candidate: cand, name: "a", elected: el, errs: errs}
				recvUntil(t, r.elected, "elected", func(v bool) bool { return v })
				term, _ := r.CurrentTerm()
				tc.end(t, c, r, cancel)
				termEnds(t, term, "the term did not end")
				cause := context.Cause(term.Context())
				if !errors.Is(cause, tc.want) {
					t.Fatalf("cause %v, want %v", cause, tc.want)
				}
				if _, ok := cause.(Reason); !ok {
					t.Fatalf("cause %T %v, want a Reason", cause, cause)
				}
			})
		})
	}
}
