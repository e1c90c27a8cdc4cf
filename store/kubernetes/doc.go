// Package kubernetes is a store for the leadership library on the
// Kubernetes API: each election key is one coordination.k8s.io/v1 Lease in
// one namespace, compare-and-swapped by its resourceVersion. It is a
// module of its own (github.com/leadership-go/leadership/store/kubernetes),
// so that programs using the other backends never depend on client-go.
//
//	kv, err := kubernetes.Open(ctx, kubernetes.Config{Namespace: "prod"})
//	if err != nil {
//		return err // errors.Is(err, store.ErrAuth), ... (package leadership/store)
//	}
//	defer kv.Close()
//	candidate := leadership.NewCandidate(kv, "billing/leader", os.Getenv("POD_NAME"), 15*time.Second)
//
// The same store from a URL, once the package is imported (which
// registers k8s:// with store/open):
//
//	kv, err := open.Store(ctx, "k8s://prod?kubeconfig=/etc/kube/config&context=ci")
//
// The URL's parameters are kubeconfig, context, dial_timeout and
// request_timeout (Go durations such as "3s"); its host is the namespace
// (empty: the kubeconfig's), and it has no user, port or path.
//
// The package exports Open, Config, Store and one detail error type,
// Error; its errors are matched with the shared vocabulary of package
// github.com/leadership-go/leadership/store (see Errors below).
//
// # Configuration
//
// Open loads the client configuration as kubectl does: Config.Kubeconfig,
// else $KUBECONFIG, else ~/.kube/config, with Config.Context or the
// current context; in a pod without any of them, the pod's service
// account (in-cluster configuration). Config.REST takes a ready
// *rest.Config instead. The namespace is Config.Namespace, else the
// context's, else the pod's, else "default". Open then sends GET /version
// within DialTimeout: the server must answer over TLS and accept the
// credentials (store.ErrUnreachable, store.ErrTLS, store.ErrAuth otherwise). It
// does not check rights on Leases. The client has no client-side rate
// limit (client-go's default of 5 requests a second is too few for a
// candidate renewing several elections; the API server's own priority and
// fairness applies), and discards the server's warnings.
//
// # Keys and Lease names
//
// Keys map to Lease names one to one, and Lease names back to keys.
// Surrounding slashes are trimmed (as the election engine does). A key
// whose '/'-separated parts are all DNS labels (a-z, 0-9 and '-', not
// starting or ending with '-') is its own name with '.' for '/':
// "billing/leader" is the Lease "billing.leader", and a Lease made by
// client-go named "my-controller" is the key "my-controller". Any other key
// (upper case, '_', '.', empty parts, or a first part starting with "x--")
// is "x--" followed by the key's bytes in base32 (alphabet 0-9a-v, no
// padding): "App/Leader" is "x--85o70bqcclgm8pbi". Keys in the readable
// form may have up to 253 characters, others up to 156 bytes; longer or
// empty keys fail with an error matching store.ErrInvalidKey (and
// store.ErrInvalidConfig). Lease names that
// start with "x--" are reserved for encoded keys.
//
// # What a Lease holds
//
// The value written at a key (the engine's election record, JSON) is kept
// in the annotation leadership-go.github.io/value (or value-base64 when it
// is not UTF-8), with the spec.renewTime of the write in
// leadership-go.github.io/renew-time and the label
// app.kubernetes.io/managed-by=leadership-go. When the value is an
// election record, the spec is filled as client-go's elector fills it:
// holderIdentity (the leader's name; absent when no one leads),
// leaseDurationSeconds (the record's TTL, rounded up to a second),
// acquireTime (when the term began), renewTime (the writer's clock at the
// write) and leaseTransitions (the term, the fencing token). So
//
//	kubectl get lease -n prod billing.leader
//
// shows the leader in its HOLDER column. The engine keeps its own lease
// and token in the record, and never reads the spec of its own Leases.
//
// # Leases written by client-go
//
// A Lease without this package's annotation, or whose spec.renewTime is
// not the one written with the annotation (a client-go elector took it
// over since), reads as an election record made from its spec: the holder
// is holderIdentity, each new renewTime is a renewal, the term is
// leaseTransitions + 1, and the lease is 10/9 of leaseDurationSeconds.
// A Follower names the holder while renewTime keeps changing, and drops it
// leaseDurationSeconds (and less than a millisecond) after it last saw
// renewTime change, on its own clock: from the arrival of the watch event
// that showed the change, which is when a client-go candidate that saw
// the same change may take over, on its own clock. So it drops it no
// earlier than leaseDurationSeconds after the last renewTime, later by the
// time the renewal took to reach it (measured: 4.001s after the watch
// delivered the last renewal, 4.007s to 4.013s after its renewTime, for a
// 4s lease renewed every 0.5s; before the engine took such a renewal for
// the next write, 3.49s and 3.50s). The engine dates a write from its
// arrival only when it is the next one: a renewal's sequence number (its
// renewTime) jumps, so the watch says so in the record (SeqJumps) in
// events of a running watch, which misses no version. A renewal seen
// otherwise is dated from the Follower's last view of the Lease before it
// (its previous event or read), as any write the engine cannot tell is the
// next one, and the holder is dropped that much earlier if it stops right
// then: the first renewal the watch sends after it listed the Lease again
// (its version gone after a compaction, or a watch that failed), one
// seen by a read (the watch missed it), or any seen after a call failed
// and before a read answered. An event that arrived while a read was in
// flight (every 3s by default) is dated from before the read, a few
// milliseconds early. The holder stops leading at most RetryPeriod plus
// RenewDeadline after its last renewal (client-go tries again RetryPeriod
// after a renewal, and gives up RenewDeadline later), so a Follower never
// drops a leader that still leads when leaseDurationSeconds is at least
// RenewDeadline plus RetryPeriod (client-go's defaults, 15s, 10s and 2s,
// are), give or take the latency of that last renewal's answer. A
// released Lease (empty holderIdentity) reads as no leader at once. This
// is for following only: mixing this library's candidates and client-go's
// electors on one Lease is not supported (client-go's elector ignores the
// record and its fencing token).
//
// # Calls
//
// Get is a GET of the Lease, which the API server serves from etcd with a
// quorum read: linearizable. LastIndex is the resourceVersion, which every
// API server takes from etcd's revision (a decimal integer; a server
// giving anything else is refused with an *Error of no vocabulary kind). AtomicPut with no
// previous pair is a create (store.ErrKeyExists when the Lease exists);
// with one, an update carrying previous.LastIndex as resourceVersion,
// which the server applies only if the Lease still has it
// (store.ErrKeyModified otherwise, store.ErrKeyNotFound if deleted).
// AtomicDelete is a delete with a resourceVersion precondition. Put reads
// and then creates or updates, again while others write between. List
// reads every Lease of the namespace and keeps the keys below the
// directory. TTLs, locks and WatchTree are refused with
// store.ErrCallNotSupported: the API server expires nothing, and the
// engine needs none of them.
//
// Watch lists the Lease by name, sends its pair (an empty pair when it is
// missing), then watches from the list's resourceVersion, with bookmarks.
// A watch that ends resumes from the last resourceVersion seen; one the
// server no longer has (410 Gone, "too old", after a compaction or a
// restart) or does not have yet ("too large", a server restored with less
// data) makes it list again, send the Lease if it changed, and resume
// from there. Errors after the first list are retried with a backoff and
// never reported: the engine reads on its own schedule.
//
// # Rights
//
// A Candidate needs get, list, watch, create and update on leases
// (coordination.k8s.io) in its namespace; a Follower get, list and watch.
// DeleteElection (AtomicDelete) also needs delete. A refusal is an *Error
// matching store.ErrPermission whose message names the user and the verb
// (the API server's own text); a Candidate without the rights reports it
// on its error channel and never leads.
//
// # Errors
//
// Every error of Open and of the Store's calls, other than valkeyrie's
// key errors (store.ErrKeyNotFound, store.ErrKeyExists,
// store.ErrKeyModified) and store.ErrCallNotSupported, is a
// *store.ConfigError or an *Error, and matches with errors.Is one kind of
// the shared vocabulary of package github.com/leadership-go/leadership/store:
// ErrInvalidConfig (the Config, the URL or its kubeconfig; a namespace
// that does not exist), ErrInvalidKey (a key with no Lease name; it also
// matches ErrInvalidConfig), ErrAuth (HTTP 401), ErrPermission (403),
// ErrTLS (an unverifiable certificate, or no TLS), ErrUnreachable (no
// answer in time, a broken connection, 429, 5xx: a write that fails so
// has an unknown outcome; it is valkeyrie's store.ErrNotReachable) or
// ErrClosed (a call after Close; it also matches ErrUnreachable). Any
// other answer of the API server is an *Error of none of them, with the
// server's message. *Error names the call, the namespace, the Lease and
// the key, and errors.As reaches the API server's status through it.
//
// # Fenced writes
//
// Store does not implement fenced.Putter, so Candidate.FencedPut returns
// leadership.ErrFencingUnsupported. A fenced write must land only if
// another object (the election's Lease) is unchanged, checked with the
// write; the API has no transaction over two objects (an update's
// precondition is on the object written). The one single-object form,
// keeping the fenced data in the election's own Lease, would bump the
// record's resourceVersion at each write and make the leader's next
// compare-and-swap fail: it would trade fencing for spurious step-downs.
// Use a store with transactions (etcd, PostgreSQL, Redis, ...) for fenced
// writes, or check the fencing token in the resource written.
//
// # Limits
//
//   - Every write goes through the API server to etcd: a renewal costs one
//     update, and the API server's latency (tens of milliseconds on a busy
//     control plane) must stay well under the TTL; use TTLs of seconds.
//   - Annotations are limited to 256 KiB in all: values (the record and
//     what Proclaim publishes) must stay well below.
//   - An update replaces the Lease: labels and annotations added by others
//     to a Lease this package writes are not kept.
//   - resourceVersion is compared as the server gives it; after etcd is
//     restored from a backup the versions may go back, which the engine
//     detects from its record (docs/semantics.md section 7).
//   - Close closes the Store's own connections; a Config.REST whose
//     transport is shared with other clients is not closed.
package kubernetes
