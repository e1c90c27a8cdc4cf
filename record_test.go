package leadership

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A record of a later format version is foreign, but its term and TTL are
// honoured: the takeover waits its TTL and the token continues.
func TestLaterRecordVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
	})
}
