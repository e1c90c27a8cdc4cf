package zookeeper

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
		`errInvalidConfig`:        {errInvalidConfig, lstore.ErrInvalidConfig},
		`errEmptyKey`:             {errEmptyKey, lstore.ErrInvalidKey},
		`errClosed`:               {errClosed, lstore.ErrClosed, lstore.ErrUnreachable},
		`errPermission`:           {errPermission, lstore.ErrPermission},
		`errAuthFailed`:           {errAuthFailed, lstore.ErrAuth},
		`&AccessError{Op: "get"}`: {&AccessError{Op: "get"}, lstore.ErrPermission},
		`&AccessError{Op: "get", WrongPassword: true}`:      {&AccessError{Op: "get", WrongPassword: true}, lstore.ErrPermission, lstore.ErrAuth},
		`invalid("Endpoints", "none")`:                      {invalid("Endpoints", "none"), lstore.ErrInvalidConfig},
		`unreachable("get", nil, context.DeadlineExceeded)`: {unreachable("get", nil, context.DeadlineExceeded), lstore.ErrUnreachable},
	})
}
