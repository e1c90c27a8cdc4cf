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
	return b.q.Do(c)
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

// runReads reads every call's key with one MGET. MGET cannot tell a
// missing key from one of another type (kvtools' GET fails on those), and
// fails whole where one key is refused (an ACL's key pattern): a key MGET
// shows missing while EXISTS finds keys among them, and every call of a
// batch MGET failed as a server's answer, are read again alone, with GET.
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
	if err != nil && len(calls) > 1 && !unreachable(err) {
		for _, c := range calls {
			c.Done <- b.readAlone(ctx, c.Key)
		}
		return
	}
	var missing []int
	for i, c := range calls {
		switch {
		case err != nil:
			c.Done <- failed(err)
		case vals[i] == nil:
			missing = append(missing, i)
		default:
			s, ok := vals[i].(string)
			if !ok {
				c.Done <- failed(fmt.Errorf("redis: MGET answered %T for a value", vals[i]))
				continue
			}
			c.Done <- batchResult{pair: &store.KVPair{Key: c.Key, Value: []byte(s)}}
		}
	}
	if len(missing) == 0 {
		return
	}
	mkeys := make([]string, len(missing))
	for j, i := range missing {
		mkeys[j] = keys[i]
	}
	n, err := b.client.Exists(ctx, mkeys...).Result()
	for _, i := range missing {
		switch {
		case err == nil && n == 0:
			calls[i].Done <- failed(store.ErrKeyNotFound)
		default: // another type, or written meanwhile, or EXISTS failed
			calls[i].Done <- b.readAlone(ctx, keys[i])
		}
	}
}

// readAlone reads key with GET, as kvtools does.
func (b *batcher) readAlone(ctx context.Context, key string) batchResult {
	v, err := b.client.Get(ctx, key).Bytes()
	switch {
	case errors.Is(err, goredis.Nil):
		return failed(store.ErrKeyNotFound)
	case err != nil:
		return failed(err)
	}
	return batchResult{pair: &store.KVPair{Key: key, Value: v}}
}

// swapScript compares and swaps each of its keys on its own, as kvtools'
// script does for one, reading them all with one MGET first (Redis counts
// each command a script runs: one MGET, and a SET per key written). ARGV
// holds, per key, the previous value, the new value and the expiry in
// seconds ("0": none). It answers per key: 1 written, 0 the LastIndex
// field differs, -1 the key is missing, -2 a value is not a JSON object or
// string (kvtools' script fails then; a JSON string has no LastIndex, as
// there), or the error of the key's GET or SET (another type, a key the
// user may not write). Nothing is written before the MGET answers, so a
// script that fails whole wrote nothing.
var swapScript = goredis.NewScript(`
local function index(v)
  if type(v) == 'table' then return true, v['LastIndex'] end
  if type(v) == 'string' then return true, nil end
  return false, nil
end
local out = {}
local curs = redis.call('mget', unpack(KEYS))
for i, key in ipairs(KEYS) do
  local at = 3 * (i - 1)
  local cur = curs[i]
  if not cur then
    local r = redis.pcall('get', key)
    if type(r) == 'table' and r.err then
      out[i] = r.err
    elseif r then
      out[i] = 0
    else
      out[i] = -1
    end
  else
    local okc, c = pcall(cjson.decode, cur)
    local okp, p = pcall(cjson.decode, ARGV[at + 1])
    local hc, ic, hp, ip = false, nil, false, nil
    if okc and okp then
      hc, ic = index(c)
      hp, ip = index(p)
    end
    if not (hc and hp) then
      out[i] = -2
    elseif ic ~= ip then
      out[i] = 0
    else
      local r
      if ARGV[at + 3] == '0' then
        r = redis.pcall('set', key, ARGV[at + 2])
      else
        r = redis.pcall('set', key, ARGV[at + 2], 'ex', ARGV[at + 3])
      end
      if type(r) == 'table' and r.err then
        out[i] = r.err
      else
        out[i] = 1
      end
    end
  end
end
return out
`)

// runSwaps runs every call's compare-and-swap in one script; if the
// script fails whole as a server's answer (its MGET refused), it wrote
// nothing, and each call runs again alone.
func (b *batcher) runSwaps(calls []*batchCall) {
	ctx, cancel := batch.Context(calls, batchTimeout)
	defer cancel()
	keys := make([]string, len(calls))
	args := make([]any, 0, 3*len(calls))
	for i, c := range calls {
		keys[i] = c.Key
		args = append(args, c.prev.Value, c.value, c.ttl)
	}
	outs, err := swapScript.Run(ctx, b.client, keys, args...).Slice()
	if err == nil && len(outs) != len(calls) {
		err = errors.New("redis: the compare-and-swap script answered with fewer codes than keys")
	}
	if err != nil && len(calls) > 1 && !unreachable(err) {
		for _, c := range calls {
			b.runSwaps([]*batchCall{c})
		}
		return
	}
	for i, c := range calls {
		if err != nil {
			c.Done <- failed(err)
			continue
		}
		switch v := outs[i].(type) {
		case int64:
			c.Done <- swapOutcome(v)
		case string:
			c.Done <- failed(replyError(v))
		default:
			c.Done <- failed(fmt.Errorf("redis: the compare-and-swap script answered %T for a key", v))
		}
	}
}

// swapOutcome is the result a code of swapScript stands for.
func swapOutcome(code int64) batchResult {
	switch code {
	case 1:
		return batchResult{}
	case 0:
		return failed(store.ErrKeyModified)
	case -1:
		return failed(store.ErrKeyNotFound)
	default:
		return failed(errors.New("redis: a stored or previous value is not a JSON object: cannot compare their LastIndex"))
	}
}

// replyError is an error reply the script passed on for one key: a
// goredis.Error, as the reply would be to the call alone.
type replyError string

func (e replyError) Error() string { return string(e) }

// RedisError marks replyError as a reply of the server (goredis.Error).
func (replyError) RedisError() {}
