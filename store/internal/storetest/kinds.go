package storetest

import (
	"errors"
	"maps"
	"slices"
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

// Errors are an adapter's errors for ErrorKinds: by the expression that
// names each, the error itself followed by the kinds of the shared
// vocabulary it stands for ({err, kind...}).
type Errors map[string][]error

// ErrorKinds checks that each of an adapter's errors matches exactly the
// kinds of the shared vocabulary it stands for, and no other (Kinds):
// callers match them with errors.Is(err, store.ErrX), never with a
// sentinel of the adapter.
func ErrorKinds(t *testing.T, errs Errors) {
	t.Helper()
	for _, what := range slices.Sorted(maps.Keys(errs)) {
		if row := errs[what]; len(row) == 0 {
			t.Errorf("%s: no error", what)
		} else {
			Kinds(t, what, row[0], row[1:]...)
		}
	}
}
