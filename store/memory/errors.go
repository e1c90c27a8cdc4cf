package memory

import (
	"fmt"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// The package's errors match the shared vocabulary of package
// github.com/leadership-go/leadership/store (errors.Is); their own values
// are not exported, only their messages name the memory store.
var (
	// errNoName is Open's (and valkeyrie.NewStore's) error when no backend
	// name is given (no endpoint, or an empty first endpoint): it matches
	// store.ErrInvalidConfig.
	errNoName = adapter.Sentinel("memory: a backend name is required as the first endpoint", lstore.ErrInvalidConfig)

	// errEmptyKey is the error for a key that is empty once leading and
	// trailing slashes are trimmed: it matches store.ErrInvalidKey.
	errEmptyKey = adapter.Sentinel("memory: empty key", lstore.ErrInvalidKey)

	// errClosed is every method's error on a handle after Close: it
	// matches store.ErrClosed and store.ErrUnreachable (valkeyrie's
	// store.ErrNotReachable).
	errClosed = adapter.Sentinel("memory: store handle closed: "+store.ErrNotReachable.Error(), lstore.ErrClosed, store.ErrNotReachable)

	// errDisconnected is every method's error on a handle cut off from its
	// backend (a test fault, see internal/memfault): it matches
	// store.ErrUnreachable.
	errDisconnected = fmt.Errorf("memory: store handle disconnected: %w", store.ErrNotReachable)

	// errServerDown is every method's error on every handle of a backend
	// whose server is stopped (a test fault, see internal/memfault):
	// it matches store.ErrUnreachable.
	errServerDown = fmt.Errorf("memory: server is down: %w", store.ErrNotReachable)

	// errNotLocked is the shared store.ErrNotLocked.
	errNotLocked = lstore.ErrNotLocked

	// errAlreadyLocked is the shared store.ErrAlreadyLocked.
	errAlreadyLocked = lstore.ErrAlreadyLocked
)
