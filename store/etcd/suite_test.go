package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

// valkeyrie's testsuite on Open()ed stores, under a unique key prefix.
func TestValkeyrieSuite(t *testing.T) {
	cfg := serverConfig(t)
	// The TTL tests close their second client themselves.
	backup := func() store.Store {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	storetest.RunSuite(t, openClient(t, cfg), storetest.Suite{
		Prefix: uniqueKey(t) + "/",
		Atomic: true, Watch: true, Lock: true, ListLock: true,
		TTL: backup(), LockTTL: backup(),
	})
}
