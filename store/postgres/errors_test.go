package postgres

import (
	"context"
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
		{`errNoEndpoint`, errNoEndpoint, []error{lstore.ErrInvalidConfig}},
		{`errInvalidConfig`, errInvalidConfig, []error{lstore.ErrInvalidConfig}},
		{`errChannelMismatch`, errChannelMismatch, []error{lstore.ErrInvalidConfig}},
		{`errInsecure`, errInsecure, []error{lstore.ErrInvalidConfig}},
		{`errEmptyKey`, errEmptyKey, []error{lstore.ErrInvalidKey}},
		{`errClosed`, errClosed, []error{lstore.ErrClosed, lstore.ErrUnreachable}},
		{`errNotLocked`, errNotLocked, []error{lstore.ErrNotLocked}},
		{`errAlreadyLocked`, errAlreadyLocked, []error{lstore.ErrAlreadyLocked}},
		{`errAuth`, errAuth, []error{lstore.ErrAuth}},
		{`errTLS`, errTLS, []error{lstore.ErrTLS}},
		{`errPermission`, errPermission, []error{lstore.ErrPermission}},
		{`errSchemaIncomplete`, errSchemaIncomplete, []error{lstore.ErrPermission}},
		{`&RefusedError{Op: "connect", Kind: errAuth}`, &RefusedError{Op: "connect", Kind: errAuth}, []error{lstore.ErrAuth}},
		{`&RefusedError{Op: "connect", Kind: errTLS}`, &RefusedError{Op: "connect", Kind: errTLS}, []error{lstore.ErrTLS}},
		{`&RefusedError{Op: "put", Kind: errPermission}`, &RefusedError{Op: "put", Kind: errPermission}, []error{lstore.ErrPermission}},
		{`&RefusedError{Op: "open", Kind: errSchemaIncomplete}`, &RefusedError{Op: "open", Kind: errSchemaIncomplete}, []error{lstore.ErrPermission}},
		{`invalid("Table", "x-y", "bad", nil)`, invalid("Table", "x-y", "bad", nil), []error{lstore.ErrInvalidConfig}},
		{`unreachable("get", context.DeadlineExceeded)`, unreachable("get", context.DeadlineExceeded), []error{lstore.ErrUnreachable}},
	} {
		storetest.Kinds(t, c.what, c.err, c.kinds...)
	}
}
