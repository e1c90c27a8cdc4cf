package memory

import (
	"testing"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// This package's errors match the kinds of store's shared vocabulary they
// stand for, and no others: callers match them with errors.Is(err,
// store.ErrX), never with a sentinel of this package.
func TestErrorKinds(t *testing.T) {
	for _, c := range []struct {
		what  string
		err   error
		kinds []error
	}{
		{`errNoName`, errNoName, []error{lstore.ErrInvalidConfig}},
		{`errEmptyKey`, errEmptyKey, []error{lstore.ErrInvalidKey}},
		{`errClosed`, errClosed, []error{lstore.ErrClosed, lstore.ErrUnreachable}},
		{`errDisconnected`, errDisconnected, []error{lstore.ErrUnreachable}},
		{`errServerDown`, errServerDown, []error{lstore.ErrUnreachable}},
		{`errNotLocked`, errNotLocked, []error{lstore.ErrNotLocked}},
		{`errAlreadyLocked`, errAlreadyLocked, []error{lstore.ErrAlreadyLocked}},
	} {
		storetest.Kinds(t, c.what, c.err, c.kinds...)
	}
}
