package memory

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/check"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var nameSeq atomic.Uint64

// freshName returns a backend name used by no other test.
func freshName(t *testing.T) string {
	t.Helper()

	return fmt.Sprintf("%s-%d", t.Name(), nameSeq.Add(1))
}

// openTwo opens two handles on a fresh backend, closed at cleanup.
func openTwo(t *testing.T) (*Store, *Store) {
	t.Helper()
	name := freshName(t)

	return openStore(t, name), openStore(t, name)
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
	if testing.Short() {
		t.Skip("valkeyrie's suite waits out real TTLs; runs without -short")
	}
	name := freshName(t)
	kv := openStore(t, name)

	storetest.RunSuite(t, kv, storetest.Suite{
		Atomic: true, Watch: true, Lock: true, ListLock: true,
		LockTTL: openStore(t, name), TTL: openStore(t, name),
	})
}

// requireClosed waits for ch to be closed (draining anything still queued).
func requireClosed[T any](t *testing.T, ch <-chan T) {
	t.Helper()

	require.True(t, storetest.Closes(ch, storetest.Patience), "channel not closed in time")
}

// requireSignal waits for ch to be closed.
func requireSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()

	select {
	case <-ch:
	case <-time.After(storetest.Patience):
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

// Fenced writes, and atomic deletes that compare the value: see
// storetest.Fenced.
func TestFenced(t *testing.T) {
	storetest.Fenced(t, openStore(t, freshName(t)), "fenced")
}

// require and assert are the checks of package check (on the standard
// library), under the names these tests use: require stops the test at a
// failed check, assert goes on.
var (
	require = check.Must
	assert  = check.Expect
)
