package leadership

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leadership-go/leadership/internal/memfault"
)

// A live leader's fenced write lands, also after renewals changed the
// record since the write the candidate saw confirmed last.
func TestFencedPutLandsForLiveLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := c.handle()
		a := leading(t, c, "fence", "a")
		term, _ := a.CurrentTerm()
		if err := a.FencedPut(ctxT(t), term, "fence/data", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		seq := recordOf(t, h, "fence").Seq
		eventually(t, "a renewal", func() bool { return recordOf(t, h, "fence").Seq > seq })
		if err := a.FencedPut(ctxT(t), term, "fence/data", []byte("v2")); err != nil {
			t.Fatalf("after renewals: %v", err)
		}
		pair, err := h.Get(ctxT(t), "fence/data", nil)
		if err != nil || string(pair.Value) != "v2" {
			t.Fatalf("read back %v, %v", pair, err)
		}
	})
}

// A leader cut off from the store, whose fenced write is sent after
// another candidate was elected, is refused by the store, and nothing is
// written.
func TestFencedPutRefusedAfterTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := c.handle()
		old := NewCandidate(h, "fence", "old", time.Second)
		t.Cleanup(old.Stop)
		term, err := old.awaitTerm(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		memfault.Disconnect(h) // old is cut off: it steps down at its deadline
		next := leading(t, c, "fence", "next")
		nt, _ := next.CurrentTerm()
		memfault.Reconnect(h) // its late write reaches the store now
		err = old.FencedPut(ctxT(t), term, "fence/data", []byte("stale"))
		if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), fmt.Sprintf("term %d", term.Token)) {
			t.Fatalf("late write through term %d: %v, want ErrFenced naming the term", term.Token, err)
		}
		if _, err := c.handle().Get(ctxT(t), "fence/data", nil); err == nil {
			t.Fatal("the refused write was stored")
		}
		if err := next.FencedPut(ctxT(t), nt, "fence/data", []byte("fresh")); err != nil {
			t.Fatalf("the new leader's write: %v", err)
		}
	})
}

// A store without fenced writes, and a term the candidate never led.
func TestFencedPutErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := leading(t, c, "fence", "a")
		term, _ := a.CurrentTerm()
		if err := a.FencedPut(ctxT(t), Term{Token: term.Token + 5}, "fence/data", nil); !errors.Is(err, ErrNotLeader) {
			t.Fatalf("a term never led: %v", err)
		}
		if err := a.FencedPut(ctxT(t), term, "/", nil); !errors.Is(err, ErrEmptyKey) {
			t.Fatalf("empty key: %v", err)
		}
		plain := NewCandidate(struct{ Backend }{c.handle()}, "fence-plain", "p", time.Second)
		t.Cleanup(plain.Stop)
		pt, err := plain.awaitTerm(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := plain.FencedPut(ctxT(t), pt, "fence/data", nil); !errors.Is(err, ErrFencingUnsupported) {
			t.Fatalf("a store without FencedPut: %v", err)
		}
	})
}
