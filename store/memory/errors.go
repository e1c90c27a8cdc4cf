package memory

import (
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/kv"
)

var (
	// ErrNoName is returned by Open (and valkeyrie.NewStore) when no backend name is given
	// (no endpoint, or an empty first endpoint). It matches the shared
	// store.ErrInvalidConfig.
	ErrNoName = adapter.Sentinel("memory: a backend name is required as the first endpoint", lstore.ErrInvalidConfig)

	// ErrEmptyKey is returned when a key is empty once leading and trailing
	// slashes are trimmed.
	ErrEmptyKey = errors.New("memory: empty key")

	// ErrClosed is returned by every method of a handle after Close.
	// errors.Is(ErrClosed, store.ErrNotReachable) is true, and so are
	// the shared store.ErrClosed and store.ErrUnreachable.
	ErrClosed = adapter.Sentinel("memory: store handle closed: "+store.ErrNotReachable.Error(), lstore.ErrClosed, store.ErrNotReachable)

	// ErrDisconnected is returned by every method of a handle cut off from
	// its backend with Disconnect. errors.Is(ErrDisconnected,
	// store.ErrNotReachable) is true.
	ErrDisconnected = fmt.Errorf("memory: store handle disconnected: %w", store.ErrNotReachable)

	// ErrServerDown is returned by every method of every handle of a backend
	// stopped with StopServer. errors.Is(ErrServerDown,
	// store.ErrNotReachable) is true.
	ErrServerDown = fmt.Errorf("memory: server is down: %w", store.ErrNotReachable)

	// ErrNotLocked is returned by Unlock when the Locker does not hold the
	// lock (never acquired, already released, or lost). It is the same
	// error as postgres.ErrNotLocked.
	ErrNotLocked = kv.ErrNotLocked

	// ErrAlreadyLocked is returned by Lock when the same Locker already holds
	// the lock. Locks are not reentrant. It is the same error as
	// postgres.ErrAlreadyLocked.
	ErrAlreadyLocked = kv.ErrAlreadyLocked
)
