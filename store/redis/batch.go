package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvtools/valkeyrie/store"
	goredis "github.com/redis/go-redis/v9"

	"github.com/leadership-go/leadership/store/internal/batch"
)

// batchLimits bound the requests made of concurrent calls: 256 keys in
// one MGET or one script, within 1 MiB; at most 4 requests of one kind at
// once. A call finding them all busy waits for the next one, which takes
// every call waiting by then.
var batchLimits = batch.Limits{MaxCalls: 256, MaxBytes: 1 << 20, MaxSenders: 4}

// batchTimeout bounds a request whose calls have no deadline.
const batchTimeout = 30 * time.Second

// batcher runs Gets, or compare-and-swaps, of a store with kvtools' raw
// codec as one request: alone when the store is idle, and when calls come
// faster than requests return, the calls waiting meanwhile together (an
// MGET, or one script with a compare per key). Thousands of elections on
// one client then cost a request per batch, not one or four each
// (kvtools' compare-and-swap is a script of EXISTS, GET and SET): see
// docs/scale.md. Each key keeps its own outcome, and a batch never holds
// two calls on one key, so the outcome is that of the calls run one by
// one, in some order.
type batcher struct {
	client *goredis.Client
	q      batch.Queue[*batchCall, batchResult]
}

// batchCall is one call: a read (prev nil), or a compare-and-swap of
// value over prev, the key expiring after ttl seconds ("0": never).
type batchCall struct {
	batch.Call[batchResult]
	prev  *store.KVPair
	value []byte
	ttl   string
}

// batchResult is a call's outcome: the pair read or written, or the error.
type batchResult struct {
	pair *store.KVPair
	err  error
}

func failed(err error) batchResult { return batchResult{err: err} }

func newBatcher(client *goredis.Client, writes bool) *batcher {
	b := &batcher{client: client}
	run := b.runReads
	if writes {
		run = b.runSwaps
	}
	b.q = batch.Queue[*batchCall, batchResult]{Limits: batchLimits, Distinct: writes, Ended: failed, Run: run}
	return b
}

// do runs the call within ctx. The result may come after ctx ended only
// as ctx's error; the call may still run (a write's outcome is then
// unknown, as for any call cut short).
func (b *batcher) do(ctx context.Context, c *batchCall) batchResult {
	if err := ctx.Err(); err != nil {
		return failed(err)
	}
	c.Ctx, c.Done = ctx, make(chan batchResult, 1)
	c.Size = len(c.Key) + len(c.value) + 64
	if c.prev != nil {
		c.Size += len(c.prev.Value)
	}
	if b.q.Push(c) {
		go b.q.Send()
	}
	return b.q.Wait(c)
}

// get reads key as kvtools' Get does with the raw codec: the value as it
// is stored, Key the normalized key, LastIndex 0.
func (b *batcher) get(ctx context.Context, key string) (*store.KVPair, error) {
	r := b.do(ctx, &batchCall{Call: batch.Call[batchResult]{Key: normalize(key)}})
	return r.pair, r.err
}

// swap is kvtools' compare-and-swap with the raw codec: value replaces
// prev if the stored value's LastIndex field (both decoded as JSON) is
// prev's; the pair returned is the one kvtools returns.
func (b *batcher) swap(ctx context.Context, key string, value []byte, prev *store.KVPair, ttl time.Duration) (bool, *store.KVPair, error) {
	r := b.do(ctx, &batchCall{Call: batch.Call[batchResult]{Key: normalize(key)}, prev: prev, value: value, ttl: fmt.Sprintf("%d", int(ttl/time.Second))})
	if r.err != nil {
		return false, nil, r.err
	}
	return true, &store.KVPair{Key: key, Value: value, LastIndex: uint64(time.Now().Nanosecond())}, nil //nolint:gosec // never negative
}

// runReads reads every call's key with one MGET.
func (b *batcher) runReads(calls []*batchCall) {
	ctx, cancel := batch.Context(calls, batchTimeout)
	defer cancel()
	keys := make([]string, len(calls))
	for i, c := range calls {
		keys[i] = c.Key
	}
	vals, err := b.client.MGet(ctx, keys...).Result()
	if err == nil && len(vals) != len(calls) {
		err = errors.New("redis: MGET answered with fewer values than keys")
	}
	for i, c := range calls {
		switch {
		case err != nil:
			c.Done <- failed(err)
		case vals[i] == nil:
			c.Done <- failed(store.ErrKeyNotFound)
		default:
			s, ok := vals[i].(string)
			if !ok {
				c.Done <- failed(fmt.Errorf("redis: MGET answered %T for a value", vals[i]))
				continue
			}
			c.Done <- batchResult{pair: &store.KVPair{Key: c.Key, Value: []byte(s)}}
		}
	}
}

// swapScript compares and swaps each of its keys on its own, as kvtools'
// script does for one, reading them all with one MGET (Redis counts each
// command a script runs: a SET per key written, and one MGET): ARGV holds, per key, the previous value, the new
// value and the expiry in seconds ("0": none). It answers a code per key:
// 1 written, 0 the LastIndex field differs, -1 the key is missing, -2 a
// value is not JSON (kvtools' script fails then).
var swapScript = goredis.NewScript(`
local out = {}
local curs = redis.call('mget', unpack(KEYS))
for i, key in ipairs(KEYS) do
  local at = 3 * (i - 1)
  local cur = curs[i]
  if not cur then
    out[i] = -1
  else
    local okc, c = pcall(cjson.decode, cur)
    local okp, p = pcall(cjson.decode, ARGV[at + 1])
    if not (okc and okp and type(c) == 'table' and type(p) == 'table') then
      out[i] = -2
    elseif c['LastIndex'] ~= p['LastIndex'] then
      out[i] = 0
    else
      if ARGV[at + 3] == '0' then
        redis.call('set', key, ARGV[at + 2])
      else
        redis.call('set', key, ARGV[at + 2], 'ex', ARGV[at + 3])
      end
      out[i] = 1
    end
  end
end
return out
`)

// runSwaps runs every call's compare-and-swap in one script.
func (b *batcher) runSwaps(calls []*batchCall) {
	ctx, cancel := batch.Context(calls, batchTimeout)
	defer cancel()
	keys := make([]string, len(calls))
	args := make([]any, 0, 3*len(calls))
	for i, c := range calls {
		keys[i] = c.Key
		args = append(args, c.prev.Value, c.value, c.ttl)
	}
	codes, err := swapScript.Run(ctx, b.client, keys, args...).Int64Slice()
	if err == nil && len(codes) != len(calls) {
		err = errors.New("redis: the compare-and-swap script answered with fewer codes than keys")
	}
	for i, c := range calls {
		switch {
		case err != nil:
			c.Done <- failed(err)
		case codes[i] == 1:
			c.Done <- batchResult{}
		case codes[i] == 0:
			c.Done <- failed(store.ErrKeyModified)
		case codes[i] == -1:
			c.Done <- failed(store.ErrKeyNotFound)
		default:
			c.Done <- failed(errors.New("redis: a stored or previous value is not JSON: cannot compare their LastIndex"))
		}
	}
}
