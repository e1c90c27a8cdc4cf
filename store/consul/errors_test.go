package consul

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
		{`errInvalidConfig`, errInvalidConfig, []error{lstore.ErrInvalidConfig}},
		{`errEmptyKey`, errEmptyKey, []error{lstore.ErrInvalidKey}},
		{`errClosed`, errClosed, []error{lstore.ErrClosed, lstore.ErrUnreachable}},
		{`errNoLeader`, errNoLeader, []error{lstore.ErrUnreachable}},
		{`errLockHeld`, errLockHeld, []error{lstore.ErrAlreadyLocked}},
		{`errLockNotHeld`, errLockNotHeld, []error{lstore.ErrNotLocked}},
		{`errPermissionDenied`, errPermissionDenied, []error{lstore.ErrPermission}},
		{`errTokenNotFound`, errTokenNotFound, []error{lstore.ErrAuth}},
		{`errServerCertificate`, errServerCertificate, []error{lstore.ErrTLS}},
		{`errClientCertificate`, errClientCertificate, []error{lstore.ErrTLS}},
		{`&ACLError{Op: "get", Err: errPermissionDenied}`, &ACLError{Op: "get", Err: errPermissionDenied}, []error{lstore.ErrPermission}},
		{`&ACLError{Op: "open", Err: errTokenNotFound}`, &ACLError{Op: "open", Err: errTokenNotFound}, []error{lstore.ErrAuth}},
		{`&certificateError{Problem: errServerCertificate}`, &certificateError{Problem: errServerCertificate}, []error{lstore.ErrTLS}},
		{`&certificateError{Problem: errClientCertificate}`, &certificateError{Problem: errClientCertificate}, []error{lstore.ErrTLS}},
		{`unreachable("open", nil, &certificateError{Problem: errServerCertificate})`, unreachable("open", nil, &certificateError{Problem: errServerCertificate}), []error{lstore.ErrUnreachable, lstore.ErrTLS}},
		{`unreachable("get", nil, context.DeadlineExceeded)`, unreachable("get", nil, context.DeadlineExceeded), []error{lstore.ErrUnreachable}},
	} {
		storetest.Kinds(t, c.what, c.err, c.kinds...)
	}
}
