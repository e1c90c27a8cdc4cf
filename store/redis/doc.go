// Package redis opens a Redis server for the leadership library, through
// kvtools' valkeyrie store (github.com/kvtools/redis, raw codec, as
// valkeyrie.NewStore builds it), with the fixes the election engine needs
// to be correct and timely on it.
//
//	kv, err := redis.Open(ctx, redis.Config{Endpoints: []string{"10.0.0.1:6379"}})
//	if err != nil {
//		return err // errors.Is(err, store.ErrNotReachable) if it did not answer
//	}
//	defer kv.Close()
//	candidate := leadership.NewCandidate(kv, "service/leader", "node-1", 15*time.Second)
//
// # Opening
//
// Open validates the Config (exactly one host:port endpoint, DB not
// negative; a *store.ConfigError otherwise), checks the server with a GET of a
// probe key on a short-lived client of its own (the credentials, DB and a
// clone of the TLS configuration, DialTimeout as socket timeouts, no
// retries), then builds the kvtools store with the same credentials, DB
// and TLS, and a go-redis client for watches (see Watches). It returns within DialTimeout (default 5s), or the context's
// earlier deadline: an error matching store.ErrUnreachable, which matches
// store.ErrNotReachable and names the endpoint, when the server did not
// answer; the server's own error (WRONGPASS, a bad DB) when it refused.
// RequestTimeout (default 5s) bounds every later call whose context has no
// deadline.
//
// With TLS, a server that refuses the connection with an alert (a client
// certificate it does not trust, an expired one, none where it requires
// one: a TLS 1.3 server says so only after the handshake, often as a
// connection reset) gives an error matching store.ErrTLS that names the
// server's alert. An ACL user needs no right on the probe key: a NOPERM
// answer to the probe is an answer. The rights a candidate and a follower
// need are listed in docs/backends.md ("Redis", "Secured").
//
// kvtools' constructor sends CONFIG SET notify-keyspace-events KEA (and
// ignores its error) on a client with 30s socket timeouts that ignore
// context deadlines: alone, it took 30s to return against a hung server,
// hence the probe first.
//
// # Fixes
//
// The *Store that Open returns carries these fixes:
//
//   - Bounded calls. kvtools' client has 30s read and write timeouts and
//     does not apply context deadlines to its sockets (go-redis'
//     ContextTimeoutEnabled is off and kvtools' Config cannot set any of
//     them): a Get with a 200ms deadline was still blocked after 1.5s
//     against a hung server. Every call now returns by its context's
//     deadline, or after RequestTimeout, with an error matching
//     store.ErrNotReachable; the abandoned call finishes in the background
//     within kvtools' 30s.
//   - Create failures not masked. kvtools' AtomicPut with previous == nil
//     runs SETNX and reports any failure (a timeout, a lost connection) as
//     store.ErrKeyExists: it did so against a dead server, for a key that
//     did not exist, and for a user whose ACL refuses the write (NOPERM).
//     On kvtools' store with the raw codec (as Open and valkeyrie.NewStore
//     build it), the create is now this package's own SETNX on kvtools'
//     client, whose error is returned as the server gave it (NOPERM
//     included; network errors match store.ErrNotReachable), and
//     ErrKeyExists only when the key exists. On any other store, a
//     reported ErrKeyExists is confirmed with a Get: it stands if the key
//     exists; the error is an error (matching
//     store.ErrNotReachable) if it does not; and the Get's error if the
//     Get fails.
//   - Watches of its own. kvtools' watch holds a connection and two
//     goroutines per watch, sends without watching its context (a
//     cancelled watch kept its subscription until the next event on its
//     key, possibly for ever), closes on the first failed read, and leaves
//     (*subscribe).receiveLoop blocked for ever in a channel send when its
//     read fails while notifications stream in, as when the client's
//     connection is reset: 1-2 such goroutines per crash round of a
//     benchmark, never ended, not even by Close. Watch and WatchTree are
//     now this package's own, directly on go-redis (see Watches below).
//   - Errors classified. Network errors, timeouts and a closed client also
//     match store.ErrNotReachable; the store's sentinel errors are
//     returned unchanged.
//
// # What kvtools' Redis store does, checked against Redis 7
//
// Compare-and-swap. AtomicPut with previous runs a Lua script that
// JSON-decodes the stored value and previous.Value and compares their
// top-level "LastIndex" members; previous.LastIndex is ignored (the raw
// codec does not store it). The election engine's records carry a token
// unique to each write in that member, so for them the comparison is exact:
// a stale compare-and-swap fails with store.ErrKeyModified and one on a
// missing key with store.ErrKeyNotFound (tested). Values without such a
// member get no protection at all (a stale compare-and-swap succeeds), and
// values that are not JSON make the script fail with a Lua error: for this
// reason valkeyrie's RunTestAtomic, whose values are not JSON, fails on
// kvtools' store as it is.
//
// LastIndex. The pair an AtomicPut returns carries exactly the value
// written and, as LastIndex, the nanoseconds of the clock at that moment:
// not zero, but meaningless. Get and Watch report LastIndex 0. The engine
// compares values and its records' own counters, never LastIndex across
// calls, so nothing depends on it.
//
// Retries. go-redis re-sends a command up to 3 times after a network
// error; a SETNX or a script whose reply was lost may so run twice, and
// the second run reports store.ErrKeyExists or store.ErrKeyModified for
// the caller's own write. The engine treats both as a conflict and reads
// the record, where it recognises its own write. kvtools' Config cannot
// change this.
//
// # Watches
//
// Every Watch and WatchTree of a store shares one Pub/Sub connection, of a
// go-redis client of the adapter's own (Open; same server, credentials, DB
// and TLS as kvtools', DialTimeout to connect, RequestTimeout per socket
// operation) or of kvtools' client (for a kvtools store wrapped by the tests,
// reached by reflection; reads then go through the wrapped store): a watched key is one
// SUBSCRIBE to its exact keyspace channel, __keyspace@<db>__:<key>, shared
// by its watchers and unsubscribed with the last of them; a watched
// directory one PSUBSCRIBE, its glob characters escaped. So a thousand
// watches cost one connection and the hub's three goroutines (tested),
// plus the forwarding goroutine the call guard keeps per watch.
//
// The first pair is read once the server has confirmed the subscription,
// so no change after it is missed; it is the current value, or a pair
// with only Key when the key does not exist. After each notification the
// key is read again (keys due together in one MGET) and the pair sent:
// a delete or expiry gives a pair with only Key, and events may repeat.
// Reads are issued one batch at a time by one goroutine, so a watcher
// never gets an older value after a newer one. A WatchTree state is the
// List of the directory (an empty slice when it is empty). LastIndex is 0,
// as kvtools' Get reports it.
//
// A watcher is never waited for: its channel holds one state, replaced by
// the newer one when the reader has not taken it (latest-state
// coalescing, in order; the engine uses watches as wake-up hints). A
// watch's channel closes when its context ends or the store is closed,
// and nothing of it remains. The hub's goroutines end at Close (which
// waits for them up to RequestTimeout) whether the connection was reset,
// the server is unreachable or hung (tested through a
// leadershiptest.Forwarder that is killed, cut and closed); one caught in
// a connection handshake with a hung server ends within RequestTimeout.
//
// A watch does not close when the server goes away. go-redis reconnects
// the Pub/Sub connection after an error and subscribes again; a
// connection that stays silent is pinged after 3s, and replaced if the
// ping is not answered within 3s more (go-redis alone would keep a hung
// connection for ever). Each confirmation of a new subscription brings a
// fresh read, so every watcher gets the current state after a
// reconnection (tested), whatever notifications were lost meanwhile.
// Failed reads and subscriptions are retried, with a backoff up to 1s.
// On a wrapped kvtools store, the reads use kvtools' client, which waits up to 30s for
// a hung server whatever the context: deliveries then pause as long; a
// store whose client is not a *redis.Client (Sentinel with ClusterClient)
// or that is not kvtools' keeps its own watches.
//
// Watches rely on keyspace notifications (notify-keyspace-events must
// include K and the generic, string and expiry events, for instance KEA;
// kvtools tries to set KEA at every open, which fails where CONFIG is
// disabled, as on some managed services). With them, puts,
// compare-and-swaps, deletes and expiries are delivered (tested). Without
// them a watch delivers only the current value (and again after each
// reconnection), and the engine sees changes only by its periodic reads
// (every TTL by default while a watch is open): a waiting candidate then
// notices a Resign or Stop late, if at all before the resigning candidate
// takes leadership back.
//
// # Limits
//
//   - A single server only. kvtools' Redis Cluster support is absent (its
//     script passes keys as arguments), and Redis Sentinel, which kvtools
//     supports and Open does not offer, replicates asynchronously: a
//     failover can lose writes the old primary acknowledged, so the record
//     can go back in time and two candidates can both believe they lead.
//     A kvtools store built with Sentinel would run, but without that
//     guarantee. Redis persistence matters the same way: a server
//     restarted without the record (no AOF or RDB) forgets the leader, and
//     a new one can be elected while the old one still holds its lease.
//   - go-redis logs dial failures ("connection pool: failed to dial")
//     through its process-wide logger to stderr; silencing it would
//     change global state, which this package does not do.
//   - Locks and TTL'd keys are kvtools' own and not fixed here (the engine
//     uses neither); kvtools' lock renewal fails with the raw codec.
//   - Keys lose a leading "/" (kvtools).
package redis
