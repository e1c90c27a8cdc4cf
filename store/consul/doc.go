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
// Nothing process-wide is read for the transport or changed. Ordinary
// requests share at most 64 connections, kept for reuse; blocking queries
// have their own (see Connections). Open then asks the agent for its
// cluster's leader until one is named, within DialTimeout or ctx's
// deadline; otherwise it returns an error matching store.ErrUnreachable naming the endpoint
// (errors.Is(err, store.ErrNotReachable); an error matching it that says so when the agent
// answered without a leader) and nothing is left running.
//
// Open also checks an ACL token it sends (Config.Token, or Consul's
// CONSUL_HTTP_TOKEN) with /v1/acl/token/self: a token the agent does not
// know is an *ACLError matching store.ErrAuth. A call the token lacks a
// right for is an *ACLError matching store.ErrPermission that names the
// right and the key ("lacks key:write on ..."), also for the reads Consul
// silently filters (a read transaction's missing result, an empty List).
// A failed TLS handshake is named: an error matching store.ErrTLS, saying
// the agent's certificate at fault (the agent's certificate: unknown authority,
// expired, another name) or the client's (the agent refused ours,
// or wants one), inside an error matching store.ErrUnreachable. No error holds the token:
// it travels in the X-Consul-Token header only.
//
// Every call of the store returned is bounded by its context, or by
// RequestTimeout (default 5s) when the context has no deadline. The
// context cancels the HTTP request itself, except for Get and AtomicPut,
// whose transaction may serve other calls too (see Batching). Close stops
// the watches, releases held locks, waits (up to 5s) for the store's
// goroutines and closes its connections.
//
// # Semantics
//
// Keys lose their leading "/" (as with kvtools; a trailing "/" is kept:
// "a" and "a/" are different Consul keys). LastIndex is the key's
// ModifyIndex, a Raft index: it grows with every write in the cluster and
// never repeats for a key, even when the key is deleted and created again
// (keys written by one transaction share it).
//
//   - Get reads in Consul's consistent mode (the leader checks it still
//     leads) unless ReadOptions.Consistent is false (default mode), as an
//     operation of a read transaction (see Batching).
//   - AtomicPut is Consul's check-and-set (ModifyIndex 0 to create) run in
//     a transaction (see Batching), whose reply carries the new
//     ModifyIndex: it returns exactly the pair written, without reading the
//     key again. Conflicts are store.ErrKeyExists (create) and
//     store.ErrKeyModified. Any other error, including a timeout, leaves
//     the outcome unknown.
//   - AtomicDelete is an index check and a delete in one transaction
//     (store.ErrKeyNotFound, store.ErrKeyModified); Delete reads the key and
//     deletes that version, store.ErrKeyNotFound when there is none.
//   - List and DeleteTree take the key and the keys below "key/", not other
//     keys sharing the prefix ("keyX"); DeleteTree is one transaction.
//   - Watch sends the current pair (an empty pair, nil Value, when the key
//     does not exist), then the new pair after each change and an empty
//     pair after a delete, never a state older than one it sent. Every
//     Watch of a store shares one blocking query (see Watches). The
//     channel closes when the context ends, the store closes, the first
//     read fails, or the shared query has failed for 3s (watch again then).
//   - WatchTree runs consistent blocking queries of its own (up to 30s
//     each, bound to its context) on a connection of its own, and closes
//     its channel when a query fails.
//   - Put with WriteOptions.TTL ties the key to a session that deletes it
//     when it expires (Put again within the TTL), as kvtools does.
//   - NewLock: see its documentation. Elections do not use locks.
//
// # Watches
//
// Consul has no watch stream for keys: a watch is a blocking query (an
// HTTP request the agent answers when the index moves past the one given,
// or after 30s), and each holds a connection while it waits. Agents refuse
// more than http_max_conns_per_client (200 by default) connections from
// one address, with 429 "too many concurrent connections": one query per
// watch could not serve 1,000 elections on a client.
//
// So each store runs one watch hub while it has watches: a single
// consistent blocking query listing the longest common prefix of the
// watched keys, cut after a "/" ("service/a/leader" and "service/b/leader"
// share "service/"; a single key is listed alone). The reply's index is the
// highest ModifyIndex (or tombstone) under the prefix, so any write there
// wakes it; every watched key it covers is then compared with what its
// watchers were last sent, by ModifyIndex, and a key missing from the
// reply counts as deleted. The query is consistent, as Gets are: the
// leader checks it still leads before each reply (one heartbeat round, per
// reply and not per watch), and no reply shows a state older than a read
// that returned before the query began, which keeps the ordering below
// exact. Each Watch first reads its key (a batched Get), then takes the
// hub's states; each watcher keeps only the latest state not yet read (a
// slow reader never holds up the hub or other watchers, and gets the
// latest state when it reads again), and a state older than one already
// sent is dropped (by ModifyIndex, and for a missing key by the reply's
// index; when a first read showed the key missing, which gives no index,
// and a reply shows it present, the next query does not block and its
// reply decides). A key added outside the prefix restarts the
// query on a wider one; the prefix narrows at the next reply once keys are
// gone. The query stops when the last watch ends. When it fails it is
// retried with backoff (50ms to 1s); after 3s without a reply the watches'
// channels close, so that their readers know (the election engine polls
// then, and watches again with backoff). A reply whose index went
// backwards on the same prefix (a restored snapshot) closes them too.
//
// Costs and limits:
//
//   - Every reply carries every key under the prefix, values included:
//     keep a store's election keys under one directory of their own. A
//     write under the prefix wakes the query even if no one watches that
//     key.
//   - Replies are paced by their size: the next query starts at least
//     50µs per entry of the last reply (at most 250ms) after the previous
//     one. 1,000 elections renewing every TTL/3 are read 20 times a second
//     (a 50ms delay on wake-ups), whatever the number of writes.
//   - Changes between two replies arrive as the latest state (a delete
//     quickly followed by a re-create may show only the re-created pair,
//     with a new index). The engine takes watch events as hints and polls
//     beside them.
//   - The empty pair of a key read missing by the first read has LastIndex
//     0 (a transaction's reply has no index); later empty pairs carry the
//     index of the reply that showed the key gone.
//
// # Batching
//
// Gets and AtomicPuts run as operations of Consul transactions. When the
// store is idle each runs alone, at once; when calls come faster than
// transactions return (8 at a time for reads, 8 for writes), those waiting
// meanwhile go together, up to 64 operations in one transaction. 1,000
// elections on one store, renewing every TTL/3 and reading every TTL, make
// about 2,000 calls a second: batched, a few dozen HTTP requests. A
// transaction applies all its operations or none: operations whose
// compare-and-swap failed get their error, and the others run again in the
// next transaction, so each call's outcome is the one it would have had
// alone. Two operations on one key never share a transaction. A
// transaction is bounded by the latest deadline of its calls, not
// cancelled by a caller who gives up (the others still wait for it, and
// cancelling an HTTP/1.1 request costs its connection). Reads in a
// transaction use the get-or-empty operation of Consul 1.14 and later;
// with an older agent Gets run one by one.
//
// # Connections
//
// A store uses at most 64 connections for ordinary requests (kept for
// reuse: bursts wait for a free one rather than opening more), plus one
// for the watch hub's query (a new one when it restarts), one per
// WatchTree and one per lock held or being acquired, each waiting in a
// blocking query. That stays below the agents' default limit of 200
// connections per client address, but several stores on one machine (and
// other Consul clients there) share that limit.
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
// This package's tests document them on kvtools' store, with what can be
// fixed from outside applied; Open does not use kvtools.
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
//   - Watch coalesces, and each reply of the shared query lists the
//     watched keys' whole prefix (see Watches).
//   - A call abandoned at its deadline is cancelled, but its write may have
//     reached the agent: the engine settles such outcomes by reading.
package consul
