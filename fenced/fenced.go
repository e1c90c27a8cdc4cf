// Package fenced is the store operation behind leadership's fenced writes:
// a write that lands only if another key (the election record) still holds
// the very record the writer last saw (its value and its version), checked
// by the store with the write. A leader that was paused or cut off, and whose
// record another candidate has since taken, cannot write through its old
// term: the store refuses.
//
// Stores implement Putter; leadership.Candidate.FencedPut uses it. Every
// adapter of this module implements it (store/memory, store/etcd,
// store/consul, store/zookeeper, store/redis, store/postgres); a store that
// does not is refused with leadership.ErrFencingUnsupported.
package fenced

import (
	"context"
	"errors"

	"github.com/kvtools/valkeyrie/store"
)

// ErrGuardChanged is returned, wrapped, by FencedPut when the guard key no
// longer holds the guard (another value or another version, or the key no
// longer exists): nothing was written.
var ErrGuardChanged = errors.New("fenced: the guard key changed")

// Putter is implemented by stores that can make a write conditional on
// another key, atomically.
type Putter interface {
	// FencedPut writes value at key, without a TTL, if and only if
	// guardKey still holds the very pair guard is: the same LastIndex
	// and the same Value bytes. A store that loses its data may hand an
	// index out again, to another writer's value: the value tells that
	// record from the one guard was read from (the election engine's
	// records carry a token unique to each write). Otherwise it writes
	// nothing and returns an error matching ErrGuardChanged.
	//
	// The check and the write are one atomic operation of the store
	// where the store can compare values in one (memory, etcd, Redis,
	// PostgreSQL). Consul's and ZooKeeper's conditional writes compare
	// an index only: their adapters compare the value in a read just
	// before, and the index atomically with the write (see their
	// package documentation for what remains).
	FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error
}
