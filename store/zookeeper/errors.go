package zookeeper

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"
)

var (
	// ErrInvalidConfig is wrapped by the errors Open returns for an unusable
	// Config.
	ErrInvalidConfig = errors.New("zookeeper: invalid configuration")

	// ErrEmptyKey is returned for a key that is empty once its slashes are
	// trimmed: the root node is not a key.
	ErrEmptyKey = errors.New("zookeeper: empty key")

	// ErrClosed is returned by calls on a closed store.
	// errors.Is(ErrClosed, store.ErrNotReachable) is true.
	ErrClosed = fmt.Errorf("zookeeper: store closed: %w", store.ErrNotReachable)
)

// UnreachableError reports that no ZooKeeper server of Endpoints answered
// during Op, or that the connection broke during it (a write's outcome is
// then unknown). errors.Is(err, store.ErrNotReachable) is true, and Err (the
// client's or the context's error) is reachable with errors.Is and
// errors.As too.
type UnreachableError struct {
	Op        string
	Endpoints []string
	Err       error
}

// Error describes the error.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("zookeeper: %s: %s not reachable: %v", e.Op, strings.Join(e.Endpoints, ","), e.Err)
}

// Unwrap returns store.ErrNotReachable and the underlying error.
func (e *UnreachableError) Unwrap() []error { return []error{store.ErrNotReachable, e.Err} }

// isConnErr reports whether err is the client losing or lacking its
// connection or session, rather than an answer of the server.
func isConnErr(err error) bool {
	for _, target := range []error{zk.ErrNoServer, zk.ErrConnectionClosed, zk.ErrClosing, zk.ErrSessionExpired, zk.ErrSessionMoved} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
