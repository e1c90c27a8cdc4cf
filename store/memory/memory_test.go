package memory

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"
	"github.com/kvtools/valkeyrie/testsuite"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// waitFor is the generous deadline used when waiting on events.
const waitFor = 10 * time.Second

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var nameSeq atomic.Uint64

// freshName returns a backend name used by no other test.
func freshName(t *testing.T) string {
	t.Helper()

	return fmt.Sprintf("%s-%d", t.Name(), nameSeq.Add(1))
}

// openStore opens a handle through valkeyrie and closes it at cleanup.
func openStore(t *testing.T, name string) *Store {
	t.Helper()

	kv, err := valkeyrie.NewStore(context.Background(), StoreName, []string{name}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = kv.Close() })

	s, ok := kv.(*Store)
	require.True(t, ok, "NewStore returned %T", kv)

	return s
}

func TestValkeyrieSuite(t *testing.T) {
	name := freshName(t)
	kv := openStore(t, name)

	testsuite.RunTestCommon(t, kv)
	testsuite.RunTestAtomic(t, kv)
	testsuite.RunTestWatch(t, kv)
	testsuite.RunTestLock(t, kv)
	testsuite.RunTestLockTTL(t, kv, openStore(t, name))
	testsuite.RunTestTTL(t, kv, openStore(t, name))
	testsuite.RunTestListLock(t, kv)
	testsuite.RunCleanup(t, kv)
}

// recvPair waits for the next pair on ch.
func recvPair(t *testing.T, ch <-chan *store.KVPair) *store.KVPair {
	t.Helper()

	select {
	case p, ok := <-ch:
		require.True(t, ok, "watch channel closed")
		require.NotNil(t, p)

		return p
	case <-time.After(waitFor):
		require.FailNow(t, "timed out waiting for a watch event")

		return nil
	}
}

// recvList waits for the next list on ch.
func recvList(t *testing.T, ch <-chan []*store.KVPair) []*store.KVPair {
	t.Helper()

	select {
	case l, ok := <-ch:
		require.True(t, ok, "watch tree channel closed")

		return l
	case <-time.After(waitFor):
		require.FailNow(t, "timed out waiting for a watch tree event")

		return nil
	}
}

// requireClosed waits for ch to be closed (draining anything still queued).
func requireClosed[T any](t *testing.T, ch <-chan T) {
	t.Helper()

	deadline := time.After(waitFor)

	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			require.FailNow(t, "channel not closed in time")
		}
	}
}

// requireSignal waits for ch to be closed.
func requireSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()

	select {
	case <-ch:
	case <-time.After(waitFor):
		require.FailNowf(t, "timed out", "waiting for %s", what)
	}
}

// requireOpen checks that ch is not closed.
func requireOpen(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()

	select {
	case <-ch:
		require.FailNowf(t, "closed too early", "%s", what)
	default:
	}
}

func keys(pairs []*store.KVPair) []string {
	out := make([]string, 0, len(pairs))
	for _, p := range pairs {
		out = append(out, p.Key)
	}

	return out
}
