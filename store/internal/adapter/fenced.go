package adapter

import (
	"fmt"

	"github.com/leadership-go/leadership/fenced"
)

// GuardChanged is the error of a fenced write to key that backend refused
// because the guard key no longer holds the guard's version, or no longer
// exists: it matches fenced.ErrGuardChanged.
func GuardChanged(backend, key string) error {
	return fmt.Errorf("%s: fenced write to %q: %w", backend, key, fenced.ErrGuardChanged)
}
