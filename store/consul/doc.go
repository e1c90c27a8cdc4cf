// Package consul is the Consul backend of the leadership library: a
// valkeyrie store.Store on Consul's KV API, correct and bounded in time for
// the election engine, which uses Get (consistent), AtomicPut, Watch and
// Delete.
//
// # Opening
//
//	kv, err := consul.Open(ctx, consul.Config{Endpoints: []string{"127.0.0.1:8500"}})
//	if err != nil {
//		return err // errors.Is(err, store.ErrNotReachable) when the agent does not answer
//	}
//	defer kv.Close()
//	c := leadership.NewCandidate(kv, "service/swarm/leader", "node-1", 15*time.Second)
//
// Open builds a client of Consul's HTTP API (github.com/hashicorp/consul/api)
// for one agent, usually the local one, with an HTTP transport of its own:
// TCP connections and TLS handshakes bounded by DialTimeout (default 5s),
// TLS from Config.TLS (then scheme https), the ACL token of Config.Token on
// every request (empty: CONSUL_HTTP_TOKEN, as Consul's client reads it).
// Nothing process-wide is read for the transport or changed. Open then asks
// the agent for its cluster's leader until one is named, within DialTimeout
// or ctx's deadline; otherwise it returns an *UnreachableError naming the
// endpoint (errors.Is(err, store.ErrNotReachable); ErrNoLeader when the
// agent answered without a leader) and nothing is left running.
//
// Every call of the store returned is bounded by its context, or by
// RequestTimeout (default 5s) when the context has no deadline, and the
// context cancels the HTTP request itself. Close stops the watches, releases
// held locks, waits (up to 5s) for the store's goroutines and closes its
// connections.
//
// # Semantics
//
// Keys lose their leading "/" (as with kvtools; a trailing "/" is kept:
// "a" and "a/" are different Consul keys). LastIndex is the key's
// ModifyIndex, a Raft index: it grows with every write in the cluster and
// never repeats, even when a key is deleted and created again.
//
//   - Get reads in Consul's consistent mode (the leader checks it still
//     leads) unless ReadOptions.Consistent is false (default mode).
//   - AtomicPut is Consul's check-and-set (ModifyIndex 0 to create) run as
//     a one-operation transaction, whose reply carries the new ModifyIndex:
//     it returns exactly the pair written, without reading the key again.
//     Conflicts are store.ErrKeyExists (create) and store.ErrKeyModified.
//     Any other error, including a timeout, leaves the outcome unknown.
//   - AtomicDelete is an index check and a delete in one transaction
//     (store.ErrKeyNotFound, store.ErrKeyModified); Delete reads the key and
//     deletes that version, store.ErrKeyNotFound when there is none.
//   - List and DeleteTree take the key and the keys below "key/", not other
//     keys sharing the prefix ("keyX"); DeleteTree is one transaction.
//   - Watch sends the current pair (an empty pair, nil Value, when the key
//     does not exist), then the new pair after each change and an empty
//     pair after a delete. It runs consistent blocking queries of up to 30s
//     each, bound to its context, and closes its channel when the context
//     ends, the store closes or a query fails (watch again then).
//   - Put with WriteOptions.TTL ties the key to a session that deletes it
//     when it expires (Put again within the TTL), as kvtools does.
//   - NewLock: see its documentation. Elections do not use locks.
//
// # What it fixes in kvtools/consul v1.0.2
//
// The kvtools store (github.com/kvtools/consul, consul.go) is not used by
// Open. Its defects, checked against a live agent in this package's tests:
//
//   - it ignores contexts (:91, :116, :147, :433) and uses http.DefaultClient,
//     which has no timeout (:532): against a hung agent a call blocks for as
//     long as TCP lets it;
//   - with TLS it replaces http.DefaultClient's transport, for the whole
//     process (:537);
//   - AtomicPut answers a successful check-and-set with a separate Get
//     (:444-449), which returns a later writer's pair if one came in between
//     (shown with a proxy writing right after the CAS), and an error, though
//     the write happened, if that Get fails;
//   - Watch skips deletes (:245), stops silently at the first error (:233),
//     notices a cancelled context only between 15s blocking queries (:221),
//     reads in default mode, does not trim the key's leading "/" (:232), and
//     its unbuffered send ignores the context (:246): a reader that walks
//     away leaks the goroutine;
//   - List and DeleteTree use the key as a bare prefix (:175, :205):
//     DeleteTree("a") also deletes "ab";
//   - Delete is a Get then an unconditional delete (:143-147);
//   - New never contacts the agent (:73-87): an unreachable one is found out
//     at the first call;
//   - NewLock's session renewal never stops unless LockOptions.RenewLock is
//     closed (:374-419): valkeyrie's testsuite leaves four renewing
//     goroutines behind.
//
// Wrap applies what can be fixed from outside to such a store (see Wrap);
// the rest remains.
//
// # Limits
//
//   - One agent per store: Consul clients talk to an agent, which forwards
//     to the servers. If that agent goes, so does the store.
//   - Elections use no sessions: liveness is the engine's own (the record's
//     TTL timed by the observers), so the agents' session_ttl_min, which
//     makes stock agents refuse session TTLs under 10s, does not limit the
//     election's TTL. It limits only Put with a TTL (10s or more) and
//     NewLock (20s or more, the session's TTL being half).
//   - Consul ignores a write that changes nothing (same value, flags and
//     session; Consul 1.20 at least): ModifyIndex stays, and no watch fires.
//     The election record carries a token unique to each write, so its
//     writes always change it.
//   - Watch coalesces: changes between two replies of a blocking query
//     arrive as the latest state (a delete quickly followed by a re-create
//     may show only the re-created pair, with a new index). The engine
//     takes watch events as hints and polls beside them.
//   - A call abandoned at its deadline is cancelled, but its write may have
//     reached the agent: the engine settles such outcomes by reading.
package consul
