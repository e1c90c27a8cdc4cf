package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/kvtools/valkeyrie/testsuite"
)

// valkeyrie's testsuite on Open()ed stores, under a unique key prefix.
func TestValkeyrieSuite(t *testing.T) {
	cfg := serverConfig(t)
	p := uniqueKey(t) + "/"
	kv := prefixed{openClient(t, cfg), p}
	// The TTL tests close their second client themselves.
	backup := func() store.Store {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return prefixed{s, p}
	}

	testsuite.RunTestCommon(t, kv)
	testsuite.RunTestAtomic(t, kv)
	testsuite.RunTestWatch(t, kv)
	testsuite.RunTestTTL(t, kv, backup())
	testsuite.RunTestLock(t, kv)
	testsuite.RunTestLockTTL(t, kv, backup())
	testsuite.RunTestListLock(t, kv)
	testsuite.RunCleanup(t, kv)
}
