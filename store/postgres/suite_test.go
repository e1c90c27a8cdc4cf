package postgres

import (
	"testing"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestValkeyrieSuite(t *testing.T) {
	table := freshTable(t)
	storetest.RunSuite(t, openOn(t, table), storetest.Suite{
		Atomic: true, Watch: true, Lock: true, ListLock: true,
		LockTTL: openOn(t, table), TTL: openOn(t, table),
	})
}
