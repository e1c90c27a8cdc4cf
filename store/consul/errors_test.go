package consul

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
		`errInvalidConfig`:     {errInvalidConfig, lstore.ErrInvalidConfig},
		`errEmptyKey`:          {errEmptyKey, lstore.ErrInvalidKey},
		`errClosed`:            {errClosed, lstore.ErrClosed, lstore.ErrUnreachable},
		`errNoLeader`:          {errNoLeader, lstore.ErrUnreachable},
		`errLockHeld`:          {errLockHeld, lstore.ErrAlreadyLocked},
		`errLockNotHeld`:       {errLockNotHeld, lstore.ErrNotLocked},
		`errPermissionDenied`:  {errPermissionDenied, lstore.ErrPermission},
		`errTokenNotFound`:     {errTokenNotFound, lstore.ErrAuth},
		`errServerCertificate`: {errServerCertificate, lstore.ErrTLS},
		`errClientCertificate`: {errClientCertificate, lstore.ErrTLS},
		`&ACLError{Op: "get", Err: errPermissionDenied}`:                             {&ACLError{Op: "get", Err: errPermissionDenied}, lstore.ErrPermission},
		`&ACLError{Op: "open", Err: errTokenNotFound}`:                               {&ACLError{Op: "open", Err: errTokenNotFound}, lstore.ErrAuth},
		`&certificateError{Problem: errServerCertificate}`:                           {&certificateError{Problem: errServerCertificate}, lstore.ErrTLS},
		`&certificateError{Problem: errClientCertificate}`:                           {&certificateError{Problem: errClientCertificate}, lstore.ErrTLS},
		`unreachable("open", nil, &certificateError{Problem: errServerCertificate})`: {unreachable("open", nil, &certificateError{Problem: errServerCertificate}), lstore.ErrUnreachable, lstore.ErrTLS},
		`unreachable("get", nil, context.DeadlineExceeded)`:                          {unreachable("get", nil, context.DeadlineExceeded), lstore.ErrUnreachable},
	})
}
