package memory

import (
	"testing"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// This package's errors stand for the kinds of store's shared vocabulary
// (storetest.ErrorKinds).
func TestErrorKinds(t *testing.T) {
	storetest.ErrorKinds(t, storetest.Errors{
		`errNoName`:        {errNoName, lstore.ErrInvalidConfig},
		`errEmptyKey`:      {errEmptyKey, lstore.ErrInvalidKey},
		`errClosed`:        {errClosed, lstore.ErrClosed, lstore.ErrUnreachable},
		`errDisconnected`:  {errDisconnected, lstore.ErrUnreachable},
		`errServerDown`:    {errServerDown, lstore.ErrUnreachable},
		`errNotLocked`:     {errNotLocked, lstore.ErrNotLocked},
		`errAlreadyLocked`: {errAlreadyLocked, lstore.ErrAlreadyLocked},
	})
}
