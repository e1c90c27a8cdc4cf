package leadershiptest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadership-go/leadership"
)

// ManyElections is the number of concurrent elections the ManyElections
// subtest runs on one client. A backend whose test server cannot take that
// many watches or requests may lower it before calling Run; zero or less
// skips the subtest.
var ManyElections = 1000

// suite is one call of Run.
type suite struct {
	b   Backend
	ttl time.Duration

	mu      sync.Mutex
	timings []string
}

// subtest is one conformance test.
type subtest struct {
	name string
	run  func(e *env)
}

var subtests = []subtest{
	{"FirstElection", testFirstElection},
	{"ResignHandsOver", testResignHandsOver},
	{"StopHandsOverAtOnce", testStopHandsOver},
	{"HandOffToNewcomers", testHandOffToNewcomers},
	{"VanishedLeaderReplaced", testVanishedLeader},
	{"CutLeaderStepsDownFirst", testCutLeader},
	{"StoreRestart", testStoreRestart},
	{"StoreWipedAfterManyElections", testStoreWipedAfterManyElections},
	{"StopWhileWaiting", testStopWhileWaiting},
	{"FencingTokensGrow", testFencingTokens},
	{"FencedWrites", testFencedWrites},
	{"EndElection", testEndElection},
	{"RelinquishInterval", testRelinquishInterval},
	{"ManyElections", testManyElections},
}

// Run runs the conformance suite against b, one subtest per guarantee of
// docs/semantics.md:
//
//   - FirstElection: one leader among three candidates; each elected
//     channel delivers false first, the leader's then true; followers name
//     the leader; leadership holds over several TTLs.
//   - ResignHandsOver: after Resign a waiting candidate wins well under the
//     TTL, with a greater fencing token.
//   - StopHandsOverAtOnce: Stop of the leader releases it, the next
//     candidate wins at once and followers see it; the stopped candidate's
//     channels close.
//   - HandOffToNewcomers: five HandOffs in a row (TTL 10 s, or the
//     suite's if longer), each to a candidate started just before, while
//     another candidate waits: each successor takes the term, and all five
//     take under 3 s together (a successor whose watch opened just before
//     the release finds it by a read, not by a poll a TTL later).
//   - VanishedLeaderReplaced: a leader whose client vanishes is replaced
//     (typically within TTL plus a poll; asserted within 2 x TTL + 1s, for
//     loaded machines); a follower reports "" and then the successor.
//   - CutLeaderStepsDownFirst (needs Client.Cut): a leader cut off from the
//     store steps down within the TTL, before anyone else is elected; after
//     Heal it campaigns again.
//   - StoreRestart (needs Restarter): while the store is down everyone
//     reports ErrStore errors and no one leads; after the restart (Network:
//     its Stop and Start; this repository's own runs wipe the server's
//     data) a leader is elected and followers name it, without help.
//   - StoreWipedAfterManyElections (needs Restarter, and a server that
//     comes back without its data): after ElectionsBeforeWipe elections
//     pushed the store's revision high, the server restarts empty; the
//     candidates elect again with a greater token, and a follower names
//     the new leader and keeps naming it while it renews.
//   - StopWhileWaiting: Stop, and cancelling the context, of a candidate or
//     a follower that does not lead returns promptly and closes its channels.
//   - FencedWrites (needs a store that implements fenced.Putter,
//     and Client.Cut): a live leader's fenced write lands; a leader cut off
//     from the store, whose fenced write is sent after another leader was
//     elected, is refused by the store (leadership.ErrFenced), and nothing
//     is written.
//   - FencingTokensGrow: tokens strictly grow across handoffs and a crash
//     takeover.
//   - EndElection: every candidate and follower gets ErrElectionEnded and
//     its channels close; a later candidate opens a new election with a
//     greater token.
//   - RelinquishInterval: a leader steps down after its interval and the
//     waiting candidate wins.
//   - ManyElections: ManyElections concurrent elections on one client all
//     get a leader, then all stop cleanly. Their TTL is 10 ms per election
//     if that is longer than b.TTL(), so that the store takes at most 300
//     renewals a second.
//
// Each subtest uses a fresh election key and its own clients (b.Client),
// checks that no two candidates ever lead at once, stops everything it
// started, and fails if goroutines of the leadership package outlive it.
// Deadlines scale with b.TTL(): the suite waits up to 10×TTL + 10s for any
// event, and asserts only the bounds the library promises (a handoff under
// 2/3 of the TTL, sooner than a takeover by expiry could come; a takeover
// within 2 x TTL + 1s; a step-down within the TTL). The
// measured handoff, takeover and follower latencies are logged (go test -v)
// and summarised at the end.
//
// Subtests run one after the other. Run must not run in parallel with other
// tests of the same process that stop the same server, or that run
// candidates or followers (the check for leftover goroutines would count
// theirs).
func Run(t *testing.T, b Backend) {
	t.Helper()
	ttl := b.TTL()
	if ttl < leadership.MinTTL || ttl > leadership.MaxTTL {
		t.Fatalf("backend %s: TTL %v out of range [%v, %v]", b.Name(), ttl, leadership.MinTTL, leadership.MaxTTL)
	}
	s := &suite{b: b, ttl: ttl}
	t.Logf("backend %s, TTL %v, waits up to %v for an event", b.Name(), ttl, s.patience())
	start := time.Now()
	for _, st := range subtests {
		t.Run(st.name, func(t *testing.T) { s.run(t, st) })
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("%s: %d subtests in %v; timings:\n\t%s", b.Name(), len(subtests),
		time.Since(start).Round(time.Millisecond), strings.Join(s.timings, "\n\t"))
}

// patience is how long the suite waits for any one event.
func (s *suite) patience() time.Duration { return 10*s.ttl + 10*time.Second }

func (s *suite) run(t *testing.T, st subtest) {
	before := goroutineIDs()
	// Registered first, so it runs last: after every candidate, follower
	// and client of the subtest is stopped or closed.
	t.Cleanup(func() { noLibraryGoroutinesLeft(t, before, s.ttl+5*time.Second) })
	e := &env{
		t:    t,
		s:    s,
		key:  fmt.Sprintf("leadershiptest/%s/%d", st.name, time.Now().UnixNano()),
		ttl:  s.ttl,
		wait: s.patience(),
	}
	st.run(e)
}
