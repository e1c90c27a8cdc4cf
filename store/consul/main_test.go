package consul

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"
)

// envConsul names the variable holding the test agent's HTTP address
// (see scripts/README.md).
const envConsul = "LEADERSHIP_CONSUL"

// hangBound is how long a call that should end by a timeout of a second or
// less may take before the test calls it hung: generous, since the machine
// running the tests may be loaded. The time taken is logged.
const hangBound = 10 * time.Second

func TestMain(m *testing.M) {
	// Nothing is ignored: Open'ed stores wait for their goroutines and close
	// their connections in Close. The tests of kvtools stores end what
	// kvtools leaves running themselves: its watch's blocking query (by a
	// write), http.DefaultClient's idle connections (kvtoolsStore's
	// cleanup). Only the on-demand TestValkeyrieSuiteWrapped leaks, by
	// kvtools' lock renewals, which never stop.
	goleak.VerifyTestMain(m)
}

// agent returns the test agent's address, or skips the test.
func agent(t testing.TB) string {
	t.Helper()
	v := os.Getenv(envConsul)
	if v == "" {
		t.Skipf("%s is not set: this test needs a Consul agent (scripts/servers.sh start consul; eval \"$(scripts/servers.sh env)\")", envConsul)
	}
	return v
}

// testConfig is the Config the tests use on endpoint.
func testConfig(endpoint string) Config {
	return Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second}
}

// openOn opens a store on endpoint, closed at the end of the test. It is
// the one place tests make a client: one call per simulated process.
func openOn(t testing.TB, endpoint string) store.Store {
	t.Helper()
	s, err := Open(context.Background(), testConfig(endpoint))
	if err != nil {
		t.Fatalf("Open(%s): %v", endpoint, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openAgent opens a store on the test agent.
func openAgent(t testing.TB) store.Store { return openOn(t, agent(t)) }

var keySeq atomic.Uint64

// freshKey returns a key under a prefix no other test (or test process)
// uses, ending in name.
func freshKey(name string) string {
	return fmt.Sprintf("leadership-test/consul-%d-%d-%d/%s", os.Getpid(), time.Now().UnixNano()%1e9, keySeq.Add(1), name)
}

// prefixOf returns the directory part of a key.
func prefixOf(key string) string {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[:i]
		}
	}
	return key
}

// cleanup deletes the tree at dir when the test ends.
func cleanup(t testing.TB, s store.Store, dir string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.DeleteTree(ctx, dir); err != nil {
			t.Logf("cleanup %s: %v", dir, err)
		}
	})
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// noLeaks checks, once the test and all its cleanups are done, that no
// goroutine started during the test is left.
func noLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

func drained[T any](ch <-chan T) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range ch {
		}
		close(done)
	}()
	return done
}
