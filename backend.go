package leadership

import (
	"context"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// Backend is the store contract: the four calls of valkeyrie's store.Store
// that the engine makes, and nothing else. Every store.Store is a Backend,
// so any valkeyrie store (and every adapter of this module's store/ tree)
// can be passed to NewCandidate, NewFollower, EndElection and
// DeleteElection as it is.
//
// The engine keeps one record per election at one key and changes it only
// through AtomicPut. What it requires of each call:
//
//   - Get returns the key's current pair, with a LastIndex that changes on
//     every write, or an error wrapping store.ErrKeyNotFound when the key
//     is absent. A read may be stale only as far as a linearizable store
//     allows: it never shows a record older than one the same client has
//     already been shown, unless the store lost or restored its data (the
//     engine detects that, see docs/semantics.md section 7).
//   - AtomicPut is a linearizable compare-and-swap: with previous nil it
//     creates the key only if absent; otherwise it writes only if the key
//     still holds previous.LastIndex. It returns the stored pair (with its
//     new LastIndex), or false with an error wrapping store.ErrKeyExists or
//     store.ErrKeyModified (or store.ErrKeyNotFound) when the comparison
//     fails. Any other error leaves the outcome unknown: the write may still
//     land later, and the engine is built for that. The engine's previous
//     pair always carries the record's Value: a store that can should
//     compare it too (every adapter of this module's store/ tree but
//     Consul's and ZooKeeper's does), so that after it lost its data and
//     handed the index out again to another writer's record, a
//     compare-and-swap from before, perhaps applied late, is refused. One
//     that compares the index only may let it replace that record
//     (docs/semantics.md, section 7).
//   - AtomicDelete deletes the key only if it still holds
//     previous.LastIndex, and previous.Value where the store can compare
//     it (only DeleteElection calls it).
//   - Watch delivers the key's new pairs on a channel until ctx ends. The
//     engine treats events as hints: they may be late, repeated, reordered,
//     dropped or missing (a channel that never sends is fine); every
//     decision is checked against the record's own counters, and
//     liveness is timed on the engine's own clock by reads.
//
// Each call must honour ctx where it can. A call that ignores ctx is
// abandoned by the engine when ctx ends (it runs on its own goroutine), so
// a hung store delays neither step-down nor Stop.
//
// The engine uses none of the store's TTLs or locks. A Backend that cannot
// honour leases shorter than some floor may also have a method MinTTL() time.Duration, its floor.
type Backend interface {
	Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error)
	AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error)
	AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error)
	Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error)
}

// minTTLer is implemented by a Backend whose leases cannot be shorter than
// some floor (for example a store whose clock or replication is coarse):
// a Candidate's TTL below the larger of MinTTL and the Backend's MinTTL is
// refused with ErrInvalidTTL.
type minTTLer interface {
	MinTTL() time.Duration
}

// Every valkeyrie store fits the contract.
var _ Backend = store.Store(nil)
