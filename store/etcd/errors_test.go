package etcd

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
		{`errCertificateRefused`, errCertificateRefused, []error{lstore.ErrTLS}},
		{`errAuthFailed`, errAuthFailed, []error{lstore.ErrAuth}},
		{`errPermissionDenied`, errPermissionDenied, []error{lstore.ErrPermission}},
		{`invalid("Endpoints", "none")`, invalid("Endpoints", "none"), []error{lstore.ErrInvalidConfig}},
		{`unreachable(nil, context.DeadlineExceeded)`, unreachable(nil, context.DeadlineExceeded), []error{lstore.ErrUnreachable}},
	} {
		storetest.Kinds(t, c.what, c.err, c.kinds...)
	}
}
