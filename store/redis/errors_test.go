package redis

import (
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
		{`errCreateUnconfirmed`, errCreateUnconfirmed, []error{lstore.ErrUnreachable}},
		{`errTLSRefused`, errTLSRefused, []error{lstore.ErrTLS}},
		{`invalid("DB", "negative")`, invalid("DB", "negative"), []error{lstore.ErrInvalidConfig}},
	} {
		storetest.Kinds(t, c.what, c.err, c.kinds...)
	}
}
