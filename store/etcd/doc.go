// Package etcd opens etcd v3 clusters for the leadership library, through
// kvtools' valkeyrie store (github.com/kvtools/etcdv3), with the fixes the
// election engine needs to be correct and timely on it.
//
//	kv, err := etcd.Open(ctx, etcd.Config{
//		Endpoints: []string{"10.0.0.1:2379", "10.0.0.2:2379", "10.0.0.3:2379"},
//	})
//	if err != nil {
//		return err // errors.Is(err, store.ErrNotReachable) if no member answered
//	}
//	defer kv.Close()
//	candidate := leadership.NewCandidate(kv, "service/leader", "node-1", 15*time.Second)
//
// # Opening
//
// Open validates the Config (at least one host:port endpoint; Username and
// Password together; a *store.ConfigError otherwise), builds the kvtools store
// with the credentials, a clone of the TLS configuration (https endpoints)
// and a connection timeout, and reads a probe key with a linearizable read.
// It returns within DialTimeout (default 5s), or the context's earlier
// deadline: an error matching store.ErrUnreachable, which matches store.ErrNotReachable and
// names the endpoints, when no member answered, with the client closed.
// RequestTimeout (default 5s) bounds every later call whose context has no
// deadline. Several endpoints are balanced over by the etcd client.
//
// # Security
//
// With TLS set, the client verifies the members' certificates and
// presents TLS.Certificates; with Username and Password it authenticates
// with etcd's auth. A member started with --client-cert-auth takes the
// client certificate's common name as the user when no password is given.
// The user needs, on the election keys (or a prefix of them), read and
// write for a Candidate, read only for a Follower; Open's probe key needs
// no right (its linearizable read is answered before the permission
// check, and a refusal there is accepted). etcd's errors:
//
//   - a wrong user name or password: store.ErrAuth, at once;
//   - a key the user's roles do not grant: store.ErrPermission, at the
//     call (a candidate without write rights reports it on its error
//     channel and never leads);
//   - a server certificate not signed by TLS.RootCAs, or a server that does
//     not speak TLS (or does, without TLS set): an error matching store.ErrUnreachable saying
//     so, after DialTimeout;
//   - a client certificate the server refuses (none given, an issuer it
//     does not trust, expired or not yet valid, not for client
//     authentication): an error matching store.ErrTLS that names
//     the certificate's subject and issuer and what is wrong with it, after
//     DialTimeout and a TLS probe of at most two seconds.
//
// Passwords never appear in errors.
//
// Open discards the etcd client's log output. kvtools' Config cannot pass
// a logger, so the client writes a zap JSON line to stderr at every failed
// request attempt by default; Open replaces its logger (reached by
// reflection inside the kvtools store, changing nothing outside this
// client). With Username set, a failed authentication during Open (server
// unreachable, or auth not enabled on the server) may still log one line,
// written before the logger can be replaced.
//
// # Fixes
//
// The *Store that Open returns carries these fixes:
//
//   - Bounded calls. kvtools' Delete has no timeout of its own, and its
//     other calls add 5s only; while the client cannot connect, a call
//     waits for a connection until its context ends, so a Delete with a
//     context without deadline never returned against a hung server
//     (tested). Every call now returns by its context's deadline, or after
//     RequestTimeout, with an error matching store.ErrNotReachable.
//   - Leak-free watches. kvtools' watch goroutine sends without watching
//     its context; a reader that walks away no longer blocks it, and the
//     channel closes when the context ends.
//   - Authentication bounded. With Username set, etcdv3.New authenticates
//     before returning, bounded only by its ConnectionTimeout and unbounded
//     when that is zero (tested: still blocked after 1.5s against a hung
//     server); Open always sets it from DialTimeout.
//   - Require-leader watches. Watches carry etcd's require-leader option: a
//     member cut off from its cluster's quorum ends them (the engine then
//     reopens them and polls) instead of staying silent.
//   - Errors classified. Errors meaning the cluster did not answer in time
//     (gRPC Unavailable, such as "no leader", or DeadlineExceeded, and
//     deadline errors) also match store.ErrNotReachable; the store's
//     sentinel errors are returned unchanged.
//
// # What kvtools' etcd store does, checked against etcd 3.4
//
// AtomicPut with previous == nil creates only if the key does not exist
// (ErrKeyExists otherwise); with previous it compares the key's
// modification revision on the server (ErrKeyModified on mismatch, also
// for a deleted key) and returns the pair written, with its new revision.
// LastIndex is the modification revision: cluster-wide, strictly
// increasing, never reused. Get with ReadOptions{Consistent: true}, or nil
// options, is linearizable. Watch sends the current value first, then
// every change, a deletion as an empty value; it keeps working across a
// delete and re-create of the key (tested). Watch on a missing key fails
// with store.ErrKeyNotFound: the engine then polls until the key exists.
// kvtools starts the etcd watch only after its first value is read, from
// the then current revision, so a change in between is missed; the
// engine's periodic read covers it.
//
// # Limits
//
//   - TTL. etcd needs a leader for every write and linearizable read. With
//     etcd's default election timeout (1s) a leader change makes the
//     cluster unavailable for one to a few seconds, during which a leader
//     of the election cannot renew: with a TTL much under 5s it may step
//     down (safely) at such a change. Below some hundreds of milliseconds
//     the TTL is of the order of request latencies and heartbeats, and
//     useless. The tests use 2s against a cluster tuned to 100ms
//     elections.
//   - kvtools does not expose gRPC keepalives: a member that vanishes
//     without closing its connections (host crash, partition) is noticed
//     through request timeouts only, and with several endpoints the client
//     may keep trying it until TCP gives up on the connection.
//   - Locks and TTL'd keys are kvtools' own and not fixed here (the engine
//     uses neither); NewLock without LockOptions.RenewLock leaves a
//     goroutine running for ever.
//   - Keys lose a leading "/" (kvtools); values are limited by etcd's
//     request size (1.5 MiB by default).
package etcd
