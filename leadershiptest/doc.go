// Package leadershiptest is the conformance suite of the leadership
// library: one set of tests that any store.Store backend can run to show it
// keeps every guarantee of docs/semantics.md, with faults injected for real
// (clients that vanish, clients cut off from the store, the store stopped
// and restarted).
//
// A backend's test describes how to reach its store with a Backend and
// calls Run:
//
//	func TestConformance(t *testing.T) {
//		leadershiptest.Run(t, myBackend{})
//	}
//
// Run opens every client it needs with Backend.Client, one per simulated
// process, and closes them. A backend that talks TCP gets Client.Cut,
// Client.Heal and Client.Vanish almost for free by putting a Forwarder
// between each client and the server:
//
//	func (b myBackend) Client(t *testing.T) *leadershiptest.Client {
//		fwd, err := leadershiptest.NewForwarder(b.addr)
//		if err != nil {
//			t.Fatal(err)
//		}
//		t.Cleanup(func() { _ = fwd.Close() })
//		kv, err := valkeyrie.NewStore(context.Background(), "etcdv3", []string{fwd.Addr()}, b.config)
//		if err != nil {
//			t.Fatal(err)
//		}
//		return &leadershiptest.Client{
//			Store:  kv,
//			Cut:    fwd.Cut,
//			Heal:   fwd.Heal,
//			Vanish: func() { _ = fwd.Close() }, // connections reset, reconnections refused
//		}
//	}
//
// Implementing Restarter as well enables the subtest that stops and restarts
// the server. RunSlowLink runs an election over a slow link: a Network
// whose Latency makes its forwarders delay every byte (Forwarder.SetLatency). ManyElections may be lowered for a small server. The suite's
// own tests run it against the embedded store (store/memory), whose clients
// are cut with Disconnect and vanish with Close; see memory_test.go.
//
// Every subtest waits up to 10×TTL + 10s for an event and asserts only the
// bounds the library promises, so that it passes on slow servers; the
// measured latencies (handoff, takeover, follower updates) are logged with
// go test -v.
package leadershiptest
