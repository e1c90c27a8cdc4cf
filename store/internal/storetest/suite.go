package storetest

import (
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"github.com/kvtools/valkeyrie/testsuite"
)

// Suite says which parts of valkeyrie's testsuite RunSuite runs, beyond
// RunTestCommon and RunCleanup, which it always runs.
type Suite struct {
	// Prefix, when set, runs the suite under that key prefix, on every
	// store given (keys are given back without it): the suite's keys are
	// fixed, and the test server may be shared.
	Prefix string
	// Atomic, Watch, Lock and ListLock run RunTestAtomic, RunTestWatch,
	// RunTestLock and RunTestListLock.
	Atomic, Watch, Lock, ListLock bool
	// LockTTL, when set, runs RunTestLockTTL with this second client.
	LockTTL store.Store
	// TTL, when set, runs RunTestTTL with this second client.
	TTL store.Store
}

// RunSuite runs the parts of valkeyrie's testsuite that s selects on kv,
// in this order: Common, Atomic, Watch, Lock, LockTTL, TTL, ListLock,
// Cleanup.
func RunSuite(t *testing.T, kv store.Store, s Suite) {
	t.Helper()
	wrap := func(kv store.Store) store.Store {
		if s.Prefix == "" {
			return kv
		}
		return prefixed{Store: kv, prefix: s.Prefix}
	}
	kv = wrap(kv)
	testsuite.RunTestCommon(t, kv)
	if s.Atomic {
		testsuite.RunTestAtomic(t, kv)
	}
	if s.Watch {
		testsuite.RunTestWatch(t, kv)
	}
	if s.Lock {
		testsuite.RunTestLock(t, kv)
	}
	if s.LockTTL != nil {
		testsuite.RunTestLockTTL(t, kv, wrap(s.LockTTL))
	}
	if s.TTL != nil {
		testsuite.RunTestTTL(t, kv, wrap(s.TTL))
	}
	if s.ListLock {
		testsuite.RunTestListLock(t, kv)
	}
	testsuite.RunCleanup(t, kv)
}
