package zookeeper

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
		{`errPermission`, errPermission, []error{lstore.ErrPermission}},
		{`errAuthFailed`, errAuthFailed, []error{lstore.ErrAuth}},
		{`&AccessError{Op: "get"}`, &AccessError{Op: "get"}, []error{lstore.ErrPermission}},
		{`&AccessError{Op: "get", WrongPassword: true}`, &AccessError{Op: "get", WrongPassword: true}, []error{lstore.ErrPermission, lstore.ErrAuth}},
		{`invalid("Endpoints", "none")`, invalid("Endpoints", "none"), []error{lstore.ErrInvalidConfig}},
		{`unreachable("get", nil, context.DeadlineExceeded)`, unreachable("get", nil, context.DeadlineExceeded), []error{lstore.ErrUnreachable}},
	} {
		storetest.Kinds(t, c.what, c.err, c.kinds...)
	}
}
