package leadership

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/memory"
)

// readOnlyStore lets its client read but refuses every write, as a store
// does for a client with read rights only; it counts the writes tried.
type readOnlyStore struct {
	Backend
	writes atomic.Int64
}

var errNoWriteRight = errors.New("permission denied: no right to write")

func (s *readOnlyStore) AtomicPut(context.Context, string, []byte, *store.KVPair, *store.WriteOptions) (bool, *store.KVPair, error) {
	s.writes.Add(1)
	return false, nil, errNoWriteRight
}

// TestWriteRefusedBacksOff checks that a candidate whose writes are
// refused while its reads work backs off to RetryMax between acquires,
// and reports the refusal on its error channel, instead of retrying every
// RetryMin (each failed acquire is followed by a read, which works).
func TestWriteRefusedBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := memory.Open(context.Background(), memory.Config{Name: simName("refused")})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		s := &readOnlyStore{Backend: m}
		c := NewCandidate(s, "k", "a", 2*time.Second)
		elected, errs, err := c.RunForElection()
		if err != nil {
			t.Fatal(err)
		}
		refused := 0
		done := time.After(60 * time.Second)
	wait:
		for {
			select {
			case v := <-elected:
				if v {
					t.Fatal("elected without a write")
				}
			case err := <-errs:
				if errors.Is(err, errNoWriteRight) {
					refused++
				}
			case <-done:
				break wait
			}
		}
		c.Stop()
		for range elected {
		}
		// Doubling from 10ms to 1s takes 7 tries, then one a second: about 67
		// in 60s; without the backoff, several thousand.
		if n := s.writes.Load(); n < 30 || n > 90 {
			t.Errorf("%d acquires in 60s, want about 67 (one per RetryMax once backed off)", n)
		}
		if refused == 0 {
			t.Error("the refusal was never reported on the error channel")
		}
	})
}
