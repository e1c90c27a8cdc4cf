package overlap

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a participant whose term the test sets.
type fake struct{ tok atomic.Uint64 }

func (f *fake) p(name string) Participant {
	return Participant{Name: name, Term: func() (uint64, bool) { t := f.tok.Load(); return t, t != 0 }}
}

func TestHandoverIsNoOverlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a, b fake
		a.tok.Store(1)
		c := Start(time.Millisecond, a.p("a"), b.p("b"))
		time.Sleep(10 * time.Millisecond)
		a.tok.Store(0)
		time.Sleep(10 * time.Millisecond)
		b.tok.Store(2)
		time.Sleep(10 * time.Millisecond)
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		if got := c.Tokens(); len(got) != 2 || got[0] != 1 || got[1] != 2 {
			t.Fatalf("tokens %v, want [1 2]", got)
		}
		if c.Samples() == 0 {
			t.Fatal("no sample")
		}
	})
}

func TestTwoLeadersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a, b fake
		a.tok.Store(1)
		c := Start(time.Millisecond, a.p("a"), b.p("b"))
		time.Sleep(10 * time.Millisecond)
		b.tok.Store(2)
		time.Sleep(10 * time.Millisecond)
		err := c.Stop()
		if err == nil || !strings.Contains(err.Error(), "two leaders at once") {
			t.Fatalf("Stop = %v, want two leaders at once", err)
		}
		if again := c.Stop(); again != err {
			t.Fatalf("second Stop = %v, want %v", again, err)
		}
	})
}

func TestTokensGoingBackwards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a, b fake
		a.tok.Store(5)
		c := Start(time.Millisecond, a.p("a"), b.p("b"))
		time.Sleep(10 * time.Millisecond)
		a.tok.Store(0)
		time.Sleep(10 * time.Millisecond)
		b.tok.Store(3)
		time.Sleep(10 * time.Millisecond)
		if err := c.Stop(); err == nil || !strings.Contains(err.Error(), "went backwards") {
			t.Fatalf("Stop = %v, want tokens went backwards", err)
		}
	})
}

func TestNoParticipantNoSample(t *testing.T) {
	c := Start(time.Millisecond)
	if err := c.Stop(); !errors.Is(err, ErrNoSample) {
		t.Fatalf("Stop = %v, want ErrNoSample", err)
	}
}
