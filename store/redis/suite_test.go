package redis

import (
	"testing"

	"github.com/kvtools/valkeyrie/testsuite"
)

// valkeyrie's testsuite on an Open()ed store, under a unique key prefix.
func TestValkeyrieSuite(t *testing.T) {
	cfg := serverConfig(t)
	kv := prefixed{openClient(t, cfg), uniqueKey(t) + "/"}

	testsuite.RunTestCommon(t, kv)
	testsuite.RunTestWatch(t, kv)
	// RunTestAtomic is not run: kvtools' compare-and-swap script
	// JSON-decodes the stored value, and the suite's values ("world") are
	// not JSON, so its first CAS fails with a Lua error on kvtools' store
	// as it is (a kvtools defect; see TestCASComparesLastIndexMember for
	// the atomic operations on JSON values, as the election engine writes
	// them). RunTestLock and RunTestTTL are not run either: kvtools'
	// Redis locks are broken with the raw codec that valkeyrie.NewStore
	// uses (the election engine uses neither locks nor TTLs).
	testsuite.RunCleanup(t, kv)
}
