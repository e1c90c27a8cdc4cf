// Package fenced is the store operation behind leadership's fenced writes:
// a write that lands only if another key (the election record) still holds
// the version the writer last saw, checked by the store in the same atomic
// operation as the write. A leader that was paused or cut off, and whose
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
// longer holds the guard version (or no longer exists): nothing was
// written.
var ErrGuardChanged = errors.New("fenced: the guard key changed")

// Putter is implemented by stores that can make a write conditional on
// another key, atomically.
type Putter interface {
	// FencedPut writes value at key, without a TTL, if and only if
	// guardKey still holds the version guard was read at (the same
	// LastIndex), in one atomic operation of the store. Otherwise it
	// writes nothing and returns an error matching ErrGuardChanged.
	FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error
}
