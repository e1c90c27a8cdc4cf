package redis

import (
	"context"
	"reflect"

	kvredis "github.com/kvtools/redis"
	"github.com/kvtools/valkeyrie/store"
	goredis "github.com/redis/go-redis/v9"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// fencedScript writes ARGV[2] at KEYS[2], without expiry, if KEYS[1]
// holds exactly ARGV[1]; it returns 1 if it wrote, 0 if not. A script
// runs atomically: no other command comes between the check and the set.
var fencedScript = goredis.NewScript(`
if redis.call('get', KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call('set', KEYS[2], ARGV[2])
return 1
`)

// fencer makes the fenced writes of a kvtools store with the raw codec,
// on its go-redis client.
type fencer struct {
	client *goredis.Client
}

// newFencer returns the fencer of s, or nil if s is not a kvtools store
// whose client can be reached and whose codec is the raw one (values
// stored as they are given, as valkeyrie.NewStore and Open build it).
func newFencer(s store.Store) *fencer {
	c := kvtoolsClient(s)
	if c == nil {
		return nil
	}
	codec := reflect.ValueOf(s.(*kvredis.Store)).Elem().FieldByName("codec")
	if !codec.IsValid() || codec.Kind() != reflect.Interface || codec.IsNil() {
		return nil
	}
	switch codec.Elem().Type() {
	case reflect.TypeFor[*kvredis.RawCodec](), reflect.TypeFor[kvredis.RawCodec]():
		return &fencer{client: c}
	}
	return nil
}

// FencedPut writes value at key, without expiry, if guardKey still holds
// guard.Value, in one Lua script, which Redis runs atomically; otherwise
// the error matches fenced.ErrGuardChanged. The version of a key is its
// value here: kvtools stores no index (Get reports LastIndex 0), and its
// compare-and-swap compares the values' "LastIndex" members, which the
// election engine's records make unique to each write; comparing the
// whole value is as exact for them, and never weaker for other values.
// Keys are named as kvtools names them (without a leading "/").
func (f *fencer) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	if guard == nil {
		return adapter.GuardChanged(backend, key)
	}
	wrote, err := fencedScript.Run(ctx, f.client,
		[]string{normalize(guardKey), normalize(key)}, guard.Value, value).Int()
	if err != nil {
		return classify(err)
	}
	if wrote != 1 {
		return adapter.GuardChanged(backend, key)
	}
	return nil
}
