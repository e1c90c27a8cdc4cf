package kubernetes

import (
	"errors"
	"testing"

	lstore "github.com/leadership-go/leadership/store"
)

// Every kind of failure matches the adapters' shared vocabulary.
func TestErrorsMatchTheVocabulary(t *testing.T) {
	for _, tc := range []struct {
		err, kind error
	}{
		{errInvalidConfig, lstore.ErrInvalidConfig},
		{errInvalidKey, lstore.ErrInvalidConfig},
		{errInvalidKey, lstore.ErrInvalidKey},
		{invalid("Namespace", "empty", nil), lstore.ErrInvalidConfig},
		{invalid("Namespace", "empty", nil), errInvalidConfig},
		{errNamespaceNotFound, lstore.ErrInvalidConfig},
		{errAuthentication, lstore.ErrAuth},
		{errPermissionDenied, lstore.ErrPermission},
		{errTLS, lstore.ErrTLS},
		{errNotReachable, lstore.ErrUnreachable},
		{errClosed, lstore.ErrClosed},
		{errClosed, lstore.ErrUnreachable},
		{&Error{Kind: errPermissionDenied}, lstore.ErrPermission},
		{&Error{Kind: errNotReachable}, lstore.ErrUnreachable},
		{&Error{Kind: errClosed}, lstore.ErrClosed},
	} {
		if !errors.Is(tc.err, tc.kind) {
			t.Errorf("%v does not match %v", tc.err, tc.kind)
		}
	}
}
