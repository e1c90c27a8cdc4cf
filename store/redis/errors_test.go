package redis

import (
	"testing"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// This package's errors stand for the kinds of store's shared vocabulary
// (storetest.ErrorKinds).
func TestErrorKinds(t *testing.T) {
	storetest.ErrorKinds(t, storetest.Errors{
		`errInvalidConfig`:          {errInvalidConfig, lstore.ErrInvalidConfig},
		`errCreateUnconfirmed`:      {errCreateUnconfirmed, lstore.ErrUnreachable},
		`errTLSRefused`:             {errTLSRefused, lstore.ErrTLS},
		`invalid("DB", "negative")`: {invalid("DB", "negative"), lstore.ErrInvalidConfig},
	})
}
