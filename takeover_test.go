package leadership

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/electionrecord"
	"github.com/leadership-go/leadership/store/memory"
)

// A holder writes its safety margin in its record, and a waiter sends its
// takeover a quarter of that margin before the TTL, no earlier: with a
// margin of 120 ms the successor leads 30 ms before the TTL, 90 ms after
// the cut-off leader's own deadline.
func TestTakeoverLeadFollowsTheHoldersMargin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			ttl    = 4 * time.Second
			margin = 120 * time.Millisecond
		)
		name := simName("lead")
		ha, _ := memory.Open(context.Background(), memory.Config{Name: name})
		hb, _ := memory.Open(context.Background(), memory.Config{Name: name})
		defer ha.Close()
		defer hb.Close()
		a := NewCandidate(ha, "lead", "a", ttl, WithSafetyMargin(margin))
		if _, _, err := a.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer a.Stop()
		synctest.Wait()
		term, ok := a.CurrentTerm()
		if !ok {
			t.Fatal("a did not win an empty election at once")
		}
		pair, err := hb.Get(context.Background(), "lead", nil)
		if err != nil {
			t.Fatal(err)
		}
		rec, ok := electionrecord.Decode(pair.Value)
		if !ok || rec.MarginMs != margin.Milliseconds() {
			t.Fatalf("a's record %s: margin_ms %d, want %d", pair.Value, rec.MarginMs, margin.Milliseconds())
		}

		// b has a margin of its own, the default; a's counts.
		b := NewCandidate(hb, "lead", "b", ttl)
		if _, _, err := b.RunForElection(); err != nil {
			t.Fatal(err)
		}
		defer b.Stop()
		synctest.Wait()
		cut := time.Now() // a's last write was its acquire, just now
		ha.Disconnect()

		<-term.Context().Done()
		if got, want := time.Since(cut), ttl-margin; got != want {
			t.Fatalf("a stepped down %v after its last write, want %v", got, want)
		}
		for {
			if bt, ok := b.CurrentTerm(); ok {
				if got, want := bt.Began.Sub(cut), ttl-margin/4; got != want {
					t.Fatalf("b elected %v after a's last write, want the TTL less a quarter of a's margin, %v", got, want)
				}
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
}
