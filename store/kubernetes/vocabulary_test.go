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
		{ErrInvalidConfig, lstore.ErrInvalidConfig},
		{ErrInvalidKey, lstore.ErrInvalidConfig},
		{ErrInvalidKey, lstore.ErrInvalidKey},
		{invalid("Namespace", "empty", nil), lstore.ErrInvalidConfig},
		{invalid("Namespace", "empty", nil), ErrInvalidConfig},
		{ErrNamespaceNotFound, lstore.ErrInvalidConfig},
		{ErrAuthentication, lstore.ErrAuth},
		{ErrPermissionDenied, lstore.ErrPermission},
		{ErrTLS, lstore.ErrTLS},
		{ErrNotReachable, lstore.ErrUnreachable},
		{ErrClosed, lstore.ErrClosed},
		{ErrClosed, lstore.ErrUnreachable},
		{&Error{Kind: ErrPermissionDenied}, lstore.ErrPermission},
		{&Error{Kind: ErrNotReachable}, lstore.ErrUnreachable},
		{&Error{Kind: ErrClosed}, lstore.ErrClosed},
	} {
		if !errors.Is(tc.err, tc.kind) {
			t.Errorf("%v does not match %v", tc.err, tc.kind)
		}
	}
}
