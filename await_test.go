package leadership

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// campaignResult is what one Campaign call returned.
type campaignResult struct {
	term Term
	err  error
}

// campaignAsync calls Campaign in the background.
func campaignAsync(c *Candidate, ctx context.Context) <-chan campaignResult {
	out := make(chan campaignResult, 1)
	go func() {
		t, err := c.awaitTerm(ctx)
		out <- campaignResult{t, err}
	}()
	return out
}

// leading returns candidate name of key on its own handle, once Campaign
// made it the leader; it stops when the test ends.
func leading(t *testing.T, c *cluster, key, name string) *Candidate {
	t.Helper()
	cand := NewCandidate(c.handle(), key, name, time.Second)
	t.Cleanup(cand.Stop)
	if _, err := cand.awaitTerm(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return cand
}

// Campaign returns once the candidate leads, and blocks while another does.
func TestCampaignBlocksUntilElected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := NewCandidate(c.handle(), "await", "a", time.Second)
		t.Cleanup(a.Stop)
		at, err := a.awaitTerm(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if now, ok := a.CurrentTerm(); !ok || now.Token != at.Token || !a.IsLeader() {
			t.Fatalf("Campaign returned %+v; CurrentTerm %+v, %v", at, now, ok)
		}
		if again, err := a.awaitTerm(ctxT(t)); err != nil || again.Token != at.Token {
			t.Fatalf("a leader's second Campaign: %+v, %v", again, err)
		}
		b := NewCandidate(c.handle(), "await", "b", time.Second)
		t.Cleanup(b.Stop)
		res := campaignAsync(b, context.Background())
		select {
		case r := <-res:
			t.Fatalf("Campaign returned while another leads: %+v", r)
		case <-time.After(300 * time.Millisecond):
		}
		a.Stop()
		r := recv(t, res, "b's Campaign")
		if r.err != nil || r.term.Token <= at.Token || !b.IsLeader() {
			t.Fatalf("b's Campaign: %+v; want a term above %d", r, at.Token)
		}
	})
}

// When its context ends first, Campaign returns the context's cause and
// stops the candidacy it started: that candidate never leads later.
func TestCampaignContextEndsStopsWhatItStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := leading(t, c, "await", "a")
		b := NewCandidate(c.handle(), "await", "b", time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if _, err := b.awaitTerm(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		closed(t, b.Done(), "b's Done")
		a.Stop()
		if _, err := b.awaitTerm(ctxT(t)); !errors.Is(err, ErrStopped) {
			t.Fatalf("Campaign after its stop: %v, want ErrStopped", err)
		}
		if b.IsLeader() {
			t.Fatal("a candidate whose Campaign gave up leads")
		}
		cause := errors.New("shutting down")
		d := NewCandidate(c.handle(), "await", "d", time.Second)
		cctx, ccancel := context.WithCancelCause(context.Background())
		ccancel(cause)
		if _, err := d.awaitTerm(cctx); err != cause {
			t.Fatalf("err = %v, want the context's cause", err)
		}
	})
}

// On a candidate already running, Campaign only waits: the end of its
// context leaves the candidacy running.
func TestCampaignOnRunningCandidateOnlyWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		l, other := c.leaderAndOther("await", time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := other.awaitTerm(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		res := campaignAsync(other.Candidate, context.Background())
		l.Resign()
		r := recv(t, res, "the waiting candidate's Campaign")
		if r.err != nil || !other.IsLeader() {
			t.Fatalf("Campaign: %+v", r)
		}
	})
}

// Campaign reports why a candidate stopped while it waited, and the
// constructor's errors.
func TestCampaignReportsStopAndEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := leading(t, c, "await", "a")
		b := NewCandidate(c.handle(), "await", "b", time.Second)
		res := campaignAsync(b, context.Background())
		eventually(t, "b runs", func() bool { return b.leader() == "a" })
		b.Stop()
		if r := recv(t, res, "Campaign after Stop"); !errors.Is(r.err, ErrStopped) {
			t.Fatalf("err = %v, want ErrStopped", r.err)
		}
		d := NewCandidate(c.handle(), "await", "d", time.Second)
		t.Cleanup(d.Stop)
		res = campaignAsync(d, context.Background())
		eventually(t, "d runs", func() bool { return d.leader() == "a" })
		if err := EndElection(ctxT(t), a.client, a.key); err != nil {
			t.Fatal(err)
		}
		if r := recv(t, res, "Campaign after the end"); !errors.Is(r.err, ErrElectionEnded) {
			t.Fatalf("err = %v, want ErrElectionEnded", r.err)
		}
		if _, err := NewCandidate(nil, "await", "e", time.Second).awaitTerm(ctxT(t)); !errors.Is(err, ErrNilStore) {
			t.Fatalf("nil store: %v", err)
		}
	})
}
