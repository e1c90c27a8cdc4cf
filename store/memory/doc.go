// Package memory is an in-process implementation of valkeyrie's store.Store,
// the embedded default backend of the leadership library.
//
// # Opening
//
// Open, the shape of every adapter's Open, returns a handle on the backend
// Config.Name; every handle opened with the same name in one process shares
// the same data, indexes, locks and watches:
//
//	kv, err := memory.Open(ctx, memory.Config{Name: "cluster-a"})
//	if err != nil {
//		return err
//	}
//	defer kv.Close()
//
//	err = kv.Put(ctx, "service/leader", []byte("node-1"), nil)
//	pair, err := kv.Get(ctx, "service/leader", nil)
//	events, err := kv.Watch(ctx, "service/leader", nil)
//
// Importing the package also registers the store with valkeyrie under
// StoreName ("leadership-memory"), the first endpoint naming the backend (see
// valkeyrie.go): valkeyrie.NewStore(ctx, memory.StoreName,
// []string{"cluster-a"}, nil) returns the same *Store behind the interface.
//
// # Semantics
//
// Keys are normalised by trimming leading and trailing slashes. A single
// backend-wide index increases by one on every write (put, CAS, delete,
// expiry, lock acquisition and release); KVPair.LastIndex is the index of the
// key's last modification. Reads are always linearizable and ReadOptions are
// ignored. Existing keys always have a non-nil Value, so a pair with a nil
// Value received from Watch means the key was deleted or expired.
//
// Each handle is an independent client. Keys written with a TTL and
// KeepAlive, and held locks, are kept alive by the handle that wrote them
// while it is open and reachable. Close behaves as a client that vanished:
// its watch channels close and every later call returns an error matching store.ErrClosed, but what
// it kept alive is not removed at once; it expires one TTL after the close.
//
// # Fault injection
//
// This module's own tests simulate failures with test hooks in the
// internal package internal/memfault (out of this package's API): its
// Disconnect and Reconnect cut one handle off, like a network partition,
// and heal it; StopServer and StartServer take a whole backend down and
// back, LoseData brings it back without its data (no persistence).
//
// While unreachable, calls fail with errors matching store.ErrUnreachable
// (valkeyrie's store.ErrNotReachable), nothing can be kept alive so leases
// expire one TTL later, and watches deliver nothing; once reachable again,
// each watch first receives the current state of what changed meanwhile.
// Data survives a stopped server; a loss of data wipes every key and lock
// and restarts the modification index, as a server without persistence
// comes back.
package memory
