package leadership

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Regression tests for problems found in review.

// A candidate that opens a new election while DeleteElection waits must not
// have its record deleted under it.
func TestDeleteElectionSparesAReopenedElection(t *testing.T) {
	c := newCluster(t)
	h := c.handle()
	done := make(chan error, 1)
	go func() { done <- DeleteElection(ctxT(t), h, "reopen") }() // no one led: ends, then deletes
	eventually(t, "the election ended", func() bool {
		p, err := h.Get(context.Background(), "reopen", nil)
		return err == nil && snapshotOf(p).rec.Ended
	})
	n := c.campaign("reopen", 300*time.Millisecond, 1)[0] // reopens it
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// n joined before the end or reopened the ended election, so it was
	// ended (and told), or it created a fresh election after the deletion
	// (and leads it).
	// Never a deleted record under a live leader.
	eventually(t, "n leads or is told of the end", func() bool {
		return n.IsLeader() || errors.Is(n.Err(), ErrElectionEnded)
	})
	if n.IsLeader() {
		if _, err := h.Get(context.Background(), "reopen", nil); err != nil {
			t.Fatalf("n leads but its record is gone: %v", err)
		}
	}
}

// A TTL that is not a whole number of milliseconds is rounded up, so the
// leader's deadline and the waiters' timing agree.
func TestTTLRoundedToMilliseconds(t *testing.T) {
	c := newCluster(t)
	cand := NewCandidate(c.handle(), "round", "a", 30*time.Millisecond+999*time.Microsecond)
	if cand.ttl != 31*time.Millisecond {
		t.Fatalf("ttl %v", cand.ttl)
	}
}

// After Stop, the last value of the elected channel is false even when the
// reader left a true in the buffer.
func TestElectedChannelEndsOnFalse(t *testing.T) {
	for range 20 {
		s := newBoolSink()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { s.run(stop); close(done) }()
		if <-s.out {
			t.Fatal("first value true")
		}
		s.push(true)
		for len(s.out) == 0 { // the true waits in the buffer, unread
			time.Sleep(time.Microsecond)
		}
		s.push(false)
		close(stop)
		<-done
		var got []bool
		for v := range s.out {
			got = append(got, v)
		}
		if len(got) > 0 && got[len(got)-1] {
			t.Fatalf("after the first false the reader saw %v", got)
		}
	}
}

// A Run that could not start (store down) can be tried again.
func TestRunAfterFailedStart(t *testing.T) {
	c := newCluster(t)
	h := c.handle()
	cand := NewCandidate(h, "rerun", "a", time.Second)
	h.Disconnect()
	if err := cand.Run(context.Background(), Callbacks{}); !errors.Is(err, ErrStore) {
		t.Fatalf("Run on a store that is down: %v", err)
	}
	h.Reconnect()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cand.Run(ctx, Callbacks{OnStartedLeading: func(context.Context, Term) { cancel() }})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("second Run: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("second Run never led")
	}
}

// A schedule that never fires is refused.
func TestScheduleThatNeverFires(t *testing.T) {
	c := newCluster(t)
	_, _, err := NewCandidate(c.handle(), "never", "a", time.Second, WithRelinquishSchedule("0 0 30 2 *")).RunForElection()
	if !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Feb 30: %v", err)
	}
}

// A record of a later format version is foreign, but its term and TTL are
// honoured: the takeover waits its TTL and the token continues.
func TestLaterRecordVersion(t *testing.T) {
	c := newCluster(t)
	h := c.handle()
	if err := h.Put(context.Background(), "v2", []byte(`{"v":2,"leader":"future","term":41,"ttl_ms":400}`), nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := c.campaign("v2", 100*time.Millisecond, 1)[0]
	recvUntil(t, r.elected, "takes over", func(v bool) bool { return v })
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Fatalf("took over after %v, before the record's own TTL", took)
	}
	if term, _ := r.CurrentTerm(); term.Token != 42 {
		t.Fatalf("token %d, want 42", term.Token)
	}
}
