package etcd

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
		`errInvalidConfig`:                           {errInvalidConfig, lstore.ErrInvalidConfig},
		`errCertificateRefused`:                      {errCertificateRefused, lstore.ErrTLS},
		`errAuthFailed`:                              {errAuthFailed, lstore.ErrAuth},
		`errPermissionDenied`:                        {errPermissionDenied, lstore.ErrPermission},
		`invalid("Endpoints", "none")`:               {invalid("Endpoints", "none"), lstore.ErrInvalidConfig},
		`unreachable(nil, context.DeadlineExceeded)`: {unreachable(nil, context.DeadlineExceeded), lstore.ErrUnreachable},
	})
}
