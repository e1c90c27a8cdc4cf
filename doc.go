// Package leadership elects one leader among many processes on top of a
// distributed key/value store reached through valkeyrie's store.Store:
// etcd, Consul, ZooKeeper, Redis, PostgreSQL, or the embedded in-memory
// store. Each adapter lives in its own package and registers itself with
// valkeyrie when imported: import store/memory (registered as memory.StoreName, "leadership-memory") or
// the adapter of your store; this package imports none of them.
//
// A Candidate runs for election and reports on a channel whether it leads;
// a Follower reports who leads. The API of docker/leadership works as it
// did:
//
//	client, _ := valkeyrie.NewStore(ctx, "etcdv3", []string{"127.0.0.1:2379"}, nil)
//	underwood := leadership.NewCandidate(client, "service/swarm/leader", "underwood", 15*time.Second)
//	electedCh, errCh, err := underwood.RunForElection()
//
// On the same engine there are a callback style (Run with OnStartedLeading,
// whose context ends the moment leadership does, as client-go's Run and
// drio-ai's callbacks), a status stream (Status, as
// Comcast's go-leaderelection), relinquish schedules
// (WithRelinquishSchedule, as drio-ai's leaderelection), fenced writes
// (FencedPut), HandOff, and EndElection and DeleteElection.
//
// # Guarantees
//
// At most one candidate acts as leader at any instant. A leader that cannot
// confirm its lease steps down at its own deadline, the start of its last
// confirmed renewal plus the TTL minus a safety margin, which is before any
// other candidate may take over. Each term has a fencing token (Term.Token)
// that is greater than every earlier term's: pass it to the resources the
// leader guards, so that they can refuse a leader that was paused past its
// deadline. Followers never name a leader that is gone. A slow reader never
// delays renewal or step-down and never misses a loss of leadership. Stop
// and Resign are safe at any time, any number of times, from any goroutine.
//
// See docs/semantics.md for every rule and docs/design.md for how the
// engine keeps them on stores that get some of their own primitives wrong.
package leadership
