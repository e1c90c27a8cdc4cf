package storetest

import (
	"errors"
	"testing"

	lstore "github.com/leadership-go/leadership/store"
)

// vocabulary is the shared error vocabulary of package store, by name.
var vocabulary = map[string]error{
	"ErrAuth":          lstore.ErrAuth,
	"ErrPermission":    lstore.ErrPermission,
	"ErrTLS":           lstore.ErrTLS,
	"ErrInvalidConfig": lstore.ErrInvalidConfig,
	"ErrUnreachable":   lstore.ErrUnreachable,
	"ErrClosed":        lstore.ErrClosed,
	"ErrInvalidKey":    lstore.ErrInvalidKey,
	"ErrAlreadyLocked": lstore.ErrAlreadyLocked,
	"ErrNotLocked":     lstore.ErrNotLocked,
}

// Kinds checks that err matches (errors.Is) exactly the kinds of the
// shared vocabulary given, and no other: an adapter's errors stand for
// store's kinds.
func Kinds(t *testing.T, what string, err error, kinds ...error) {
	t.Helper()
	for name, kind := range vocabulary {
		want := false
		for _, k := range kinds {
			want = want || k == kind //nolint:errorlint // the vocabulary's values
		}
		if got := errors.Is(err, kind); got != want {
			t.Errorf("%s: errors.Is(%v, store.%s) = %v, want %v", what, err, name, got, want)
		}
	}
}
