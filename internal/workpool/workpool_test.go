package workpool

import (
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEachCallsEveryIndexOnceWithinTheBound(t *testing.T) {
	const n, workers = 100, 4
	var calls [n]atomic.Int32
	var running, most atomic.Int32
	Each(n, workers, func(i int) {
		now := running.Add(1)
		for {
			old := most.Load()
			if now <= old || most.CompareAndSwap(old, now) {
				break
			}
		}
		calls[i].Add(1)
		running.Add(-1)
	})
	for i := range calls {
		if c := calls[i].Load(); c != 1 {
			t.Fatalf("f(%d) called %d times", i, c)
		}
	}
	if m := most.Load(); m > workers {
		t.Fatalf("%d calls at once, bound %d", m, workers)
	}
}

func TestEachWithNothingToDo(t *testing.T) {
	Each(0, 8, func(int) { t.Fatal("called") })
}
