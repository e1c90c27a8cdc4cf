package postgres

import (
	"context"
	"testing"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// This package's errors stand for the kinds of store's shared vocabulary
// (storetest.ErrorKinds).
func TestErrorKinds(t *testing.T) {
	storetest.ErrorKinds(t, storetest.Errors{
		`errNoEndpoint`:       {errNoEndpoint, lstore.ErrInvalidConfig},
		`errInvalidConfig`:    {errInvalidConfig, lstore.ErrInvalidConfig},
		`errChannelMismatch`:  {errChannelMismatch, lstore.ErrInvalidConfig},
		`errInsecure`:         {errInsecure, lstore.ErrInvalidConfig},
		`errEmptyKey`:         {errEmptyKey, lstore.ErrInvalidKey},
		`errClosed`:           {errClosed, lstore.ErrClosed, lstore.ErrUnreachable},
		`errNotLocked`:        {errNotLocked, lstore.ErrNotLocked},
		`errAlreadyLocked`:    {errAlreadyLocked, lstore.ErrAlreadyLocked},
		`errAuth`:             {errAuth, lstore.ErrAuth},
		`errTLS`:              {errTLS, lstore.ErrTLS},
		`errPermission`:       {errPermission, lstore.ErrPermission},
		`errSchemaIncomplete`: {errSchemaIncomplete, lstore.ErrPermission},
		`&RefusedError{Op: "connect", Kind: errAuth}`:          {&RefusedError{Op: "connect", Kind: errAuth}, lstore.ErrAuth},
		`&RefusedError{Op: "connect", Kind: errTLS}`:           {&RefusedError{Op: "connect", Kind: errTLS}, lstore.ErrTLS},
		`&RefusedError{Op: "put", Kind: errPermission}`:        {&RefusedError{Op: "put", Kind: errPermission}, lstore.ErrPermission},
		`&RefusedError{Op: "open", Kind: errSchemaIncomplete}`: {&RefusedError{Op: "open", Kind: errSchemaIncomplete}, lstore.ErrPermission},
		`invalid("Table", "x-y", "bad", nil)`:                  {invalid("Table", "x-y", "bad", nil), lstore.ErrInvalidConfig},
		`unreachable("get", context.DeadlineExceeded)`:         {unreachable("get", context.DeadlineExceeded), lstore.ErrUnreachable},
	})
}
