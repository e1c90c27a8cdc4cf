package postgres

import (
	"testing"

	"github.com/kvtools/valkeyrie/testsuite"
)

func TestValkeyrieSuite(t *testing.T) {
	table := freshTable(t)
	kv := openOn(t, table)

	testsuite.RunTestCommon(t, kv)
	testsuite.RunTestAtomic(t, kv)
	testsuite.RunTestWatch(t, kv)
	testsuite.RunTestLock(t, kv)
	testsuite.RunTestLockTTL(t, kv, openOn(t, table))
	testsuite.RunTestTTL(t, kv, openOn(t, table))
	testsuite.RunTestListLock(t, kv)
	testsuite.RunCleanup(t, kv)
}
