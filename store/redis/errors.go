package redis

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvtools/valkeyrie/store"
	goredis "github.com/redis/go-redis/v9"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// backend names Redis in messages.
const backend = "redis"

var (
	// errInvalidConfig is matched (errors.Is) by every *configError. It
	// matches the shared store.ErrInvalidConfig.
	errInvalidConfig = adapter.Sentinel("redis: invalid configuration", lstore.ErrInvalidConfig)

	// errCreateUnconfirmed is returned by AtomicPut with previous == nil when
	// kvtools reported store.ErrKeyExists but a read shows that the key does
	// not exist: kvtools reports every failure of its SETNX (a timeout, a lost
	// connection) as ErrKeyExists. The create did not take effect, or was
	// undone by a later delete. It matches store.ErrNotReachable (the
	// shared store.ErrUnreachable).
	errCreateUnconfirmed = fmt.Errorf("redis: create not confirmed (SETNX failed or its reply was lost, and the key does not exist): %w", store.ErrNotReachable)
)

// configError is an unusable Config, returned by Open before any network
// activity: Field names the Config field at fault.
// errors.Is(err, errInvalidConfig) is true.
type configError = adapter.ConfigError

// unreachableError reports that Open could not complete a round trip with
// the server (Endpoints holds its address) within its DialTimeout.
// errors.Is(err, store.ErrNotReachable) is true, and Err (the client's
// error) is reachable with errors.Is and errors.As too.
type unreachableError = adapter.UnreachableError

// invalid is the *configError of field.
func invalid(field, reason string) error {
	return &configError{Invalid: errInvalidConfig, Field: field, Reason: reason}
}

// kinds tag the server's refusals with the shared vocabulary: WRONGPASS
// and NOAUTH (credentials refused or missing) match store.ErrAuth, NOPERM
// (an ACL user without the right) store.ErrPermission.
var kinds = []adapter.Kind{
	{Match: replyCode("WRONGPASS", "NOAUTH"), Sentinel: lstore.ErrAuth},
	{Match: replyCode("NOPERM"), Sentinel: lstore.ErrPermission},
}

// replyCode reports whether an error is a Redis error reply whose code
// (its first word) is one of codes.
func replyCode(codes ...string) func(error) bool {
	return func(err error) bool {
		var re goredis.Error
		if !errors.As(err, &re) {
			return false
		}
		code, _, _ := strings.Cut(re.Error(), " ")
		for _, c := range codes {
			if code == c {
				return true
			}
		}
		return false
	}
}
