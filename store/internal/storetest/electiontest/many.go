package electiontest

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/workpool"
	"github.com/leadership-go/leadership/store/internal/guard"
)

// Many describes a run of Many.Run: N elections on one store handle, each
// with one candidate and one follower, all on that handle.
type Many struct {
	// N is the number of elections (keys).
	N int
	// TTL is the candidates' TTL.
	TTL time.Duration
	// Wait bounds each phase: every election having a leader its follower
	// names (counted from the end of the starts), every candidate and
	// follower stopping, every follower reporting no leader once its
	// candidate stopped. Generous: only a broken store uses it up.
	Wait time.Duration
	// Workers is how many starts run at once (default 32); stops all run
	// at once.
	Workers int
}

// ManyResult is what a run of Many measured. Counts are of elections.
type ManyResult struct {
	N int
	// CandidateStartErrs and FollowerStartErrs count the RunForElection
	// and FollowElection calls that failed; StartErrs counts their errors
	// by kind (see ErrorKind).
	CandidateStartErrs, FollowerStartErrs int
	StartErrs                             map[string]int
	// Elected counts elections whose candidate leads, Named those whose
	// follower names it, when the wait for both ended; EverElected those
	// whose candidate was elected at any moment of the run.
	Elected, Named, EverElected int
	// ElectedIn is how long, from the first start, every election took to
	// have a leader named by its follower (zero if some never did).
	ElectedIn time.Duration
	// StoreErrs counts, by kind, the errors sent on the candidates' and
	// followers' error channels during the whole run.
	StoreErrs map[string]int
	// StopsLeft counts candidates and followers whose Stop had not
	// returned after Wait (a store call that ignores its context);
	// HangingIn then counts the engine's goroutines by where they wait
	// (see hangingIn).
	StopsLeft int
	HangingIn map[string]int
	// CandidateStop and FollowerStop are the longest Stop calls that
	// returned (all are called at once).
	CandidateStop, FollowerStop time.Duration
	// SawRelease counts the followers that reported "no leader" after
	// their candidate stopped; ReleaseSeen holds how long each took.
	SawRelease  int
	ReleaseSeen []time.Duration
	// PeakGoroutines and PeakSockets are the most goroutines and open
	// sockets (of the whole test process, sampled; -1 where sockets cannot
	// be counted) seen while the elections ran.
	PeakGoroutines, PeakSockets int
}

// OK reports whether every election started, had its candidate elected and
// named by its follower, stopped, and had its follower see the release.
func (r ManyResult) OK() bool {
	return r.CandidateStartErrs == 0 && r.FollowerStartErrs == 0 && r.Elected == r.N && r.Named == r.N &&
		r.StopsLeft == 0 && r.SawRelease == r.N
}

// String summarizes r on one line.
func (r ManyResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d: start errors %d candidates + %d followers; elected %d (ever %d), named by follower %d",
		r.N, r.CandidateStartErrs, r.FollowerStartErrs, r.Elected, r.EverElected, r.Named)
	if r.ElectedIn > 0 {
		fmt.Fprintf(&b, " (all in %v)", r.ElectedIn.Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "; longest Stop %v (candidates), %v (followers), stops left hanging %d; followers saw the release %d",
		r.CandidateStop.Round(time.Millisecond), r.FollowerStop.Round(time.Millisecond), r.StopsLeft, r.SawRelease)
	if len(r.ReleaseSeen) > 0 {
		d := slices.Clone(r.ReleaseSeen)
		slices.Sort(d)
		fmt.Fprintf(&b, " (median %v, max %v)", d[len(d)/2].Round(time.Millisecond), d[len(d)-1].Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "; peak goroutines %d, sockets %d", r.PeakGoroutines, r.PeakSockets)
	for _, m := range []struct {
		what string
		errs map[string]int
	}{{"start errors", r.StartErrs}, {"store errors", r.StoreErrs}, {"engine goroutines hanging in", r.HangingIn}} {
		if len(m.errs) == 0 {
			continue
		}
		kinds := make([]string, 0, len(m.errs))
		for k := range m.errs {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(i, j int) bool { return m.errs[kinds[i]] > m.errs[kinds[j]] })
		fmt.Fprintf(&b, "; %s:", m.what)
		for _, k := range kinds {
			fmt.Fprintf(&b, " %dx[%s]", m.errs[k], k)
		}
	}
	return b.String()
}

var digits = regexp.MustCompile(`[0-9]+`)

// storeFailure parses the text of a store call's error (one that matches
// leadership.ErrStore): the call, the quoted key, the store's error.
var storeFailure = regexp.MustCompile(`(?s)^leadership: ([a-z ]+) ("(?:[^"\\]|\\.)*"): (.*)$`)

// ErrorKind names the kind of err for counting: the store operation and
// the store's error with every number replaced by "N" and the key by
// "KEY", at most 120 characters.
func ErrorKind(err error) string {
	s := err.Error()
	if m := storeFailure.FindStringSubmatch(s); m != nil && errors.Is(err, leadership.ErrStore) {
		key, _ := strconv.Unquote(m[2])
		s = m[3]
		if key != "" {
			s = strings.ReplaceAll(s, key, "KEY")
		}
		s = m[1] + ": " + s
	}
	s = digits.ReplaceAllString(s, "N")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// counter counts error kinds, safely from many goroutines.
type counter struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counter) add(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]int)
	}
	c.m[ErrorKind(err)]++
}

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.m)
}

// sockets returns how many sockets the process has open, or -1.
func sockets() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// Run starts m.N elections on kv, keys prefix/0 ... prefix/N-1, each with
// a candidate "node-i" and a follower, from m.Workers goroutines at once,
// without retrying a failed start. It waits, up to m.Wait, until every
// started election has a leader named by its follower; then it stops every
// candidate (all at once), waits for the followers to report no leader,
// and stops the followers (all at once). Nothing is asserted: the caller
// judges the result. Stops that hang beyond m.Wait are left running (and
// counted).
func (m Many) Run(t testing.TB, kv store.Store, prefix string) ManyResult {
	t.Helper()
	n, workers := m.N, m.Workers
	if workers <= 0 {
		workers = 32
	}
	parallel := func(f func(i int)) { workpool.Each(n, workers, f) }
	// allAtOnce calls f(i) for every i, each in its own goroutine, and
	// waits for them up to m.Wait. It returns how many calls had not
	// returned, and the longest call that did.
	allAtOnce := func(f func(i int)) (left int, longest time.Duration) {
		var nleft, maxNS atomic.Int64
		nleft.Store(int64(n))
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				t0 := time.Now()
				f(i)
				d := int64(time.Since(t0))
				for {
					old := maxNS.Load()
					if d <= old || maxNS.CompareAndSwap(old, d) {
						break
					}
				}
				nleft.Add(-1)
			})
		}
		guard.AwaitGroup(&wg, m.Wait)
		return int(nleft.Load()), time.Duration(maxNS.Load())
	}

	res := ManyResult{N: n, PeakSockets: -1}
	var startErrs, storeErrs counter
	var readers sync.WaitGroup
	drain := func(errs <-chan error) {
		readers.Go(func() {
			for err := range errs {
				storeErrs.add(err)
			}
		})
	}

	// Sample goroutines and sockets until the elections are stopped.
	var peakG, peakS atomic.Int64
	peakS.Store(-1)
	stopSampling := make(chan struct{})
	var sampler sync.WaitGroup
	var sampling sync.Mutex
	sample := func() {
		sampling.Lock()
		defer sampling.Unlock()
		peakG.Store(max(peakG.Load(), int64(runtime.NumGoroutine())))
		peakS.Store(max(peakS.Load(), int64(sockets())))
	}
	sampler.Go(func() {
		for {
			sample()
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})

	cands := make([]*leadership.Candidate, n)
	fols := make([]*leadership.Follower, n)
	candOK := make([]bool, n)
	folOK := make([]bool, n)
	released := make([]atomic.Bool, n)     // the candidate was stopped
	releaseSeen := make([]atomic.Int64, n) // ns from Stop to the follower's "", 0 if not yet
	stoppedAt := make([]atomic.Pointer[time.Time], n)
	everElected := make([]atomic.Bool, n)
	var nCandErr, nFolErr atomic.Int64
	start := time.Now()
	parallel(func(i int) {
		key := fmt.Sprintf("%s/%d", prefix, i)
		c := leadership.NewCandidate(kv, key, fmt.Sprintf("node-%d", i), m.TTL)
		cands[i] = c
		if elected, errs, err := c.RunForElection(); err != nil {
			nCandErr.Add(1)
			startErrs.add(err)
		} else {
			candOK[i] = true
			drain(errs)
			readers.Go(func() {
				for v := range elected {
					if v {
						everElected[i].Store(true)
					}
				}
			})
		}
		f := leadership.NewFollower(kv, key)
		fols[i] = f
		leaders, errs, err := f.FollowElection()
		if err != nil {
			nFolErr.Add(1)
			startErrs.add(err)
			return
		}
		folOK[i] = true
		drain(errs)
		name := fmt.Sprintf("node-%d", i)
		readers.Go(func() {
			named := false // the release counts once the leader was named
			for v := range leaders {
				named = named || v == name
				if v == "" && named && released[i].Load() && releaseSeen[i].Load() == 0 {
					if at := stoppedAt[i].Load(); at != nil {
						releaseSeen[i].Store(max(1, int64(time.Since(*at))))
					}
				}
			}
		})
	})
	res.CandidateStartErrs, res.FollowerStartErrs = int(nCandErr.Load()), int(nFolErr.Load())
	res.StartErrs = startErrs.snapshot()

	// Every election that started has a leader its follower names.
	count := func() (elected, named int) {
		for i := range n {
			name := fmt.Sprintf("node-%d", i)
			if candOK[i] && cands[i].IsLeader() {
				elected++
				if folOK[i] && fols[i].Leader() == name {
					named++
				}
			}
		}
		return elected, named
	}
	deadline := time.Now().Add(m.Wait)
	for {
		res.Elected, res.Named = count()
		if res.Elected == n && res.Named == n {
			res.ElectedIn = time.Since(start)
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	sample()

	// Stop the candidates; each follower then reports no leader.
	res.StopsLeft, res.CandidateStop = allAtOnce(func(i int) {
		now := time.Now()
		stoppedAt[i].Store(&now)
		released[i].Store(true)
		cands[i].Stop()
	})
	deadline = time.Now().Add(m.Wait)
	for {
		seen := 0
		for i := range n {
			if releaseSeen[i].Load() != 0 {
				seen++
			}
		}
		res.SawRelease = seen
		if seen == n || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := range n {
		if d := releaseSeen[i].Load(); d != 0 {
			res.ReleaseSeen = append(res.ReleaseSeen, time.Duration(d))
		}
	}
	left, longest := allAtOnce(func(i int) { fols[i].Stop() })
	res.StopsLeft += left
	res.FollowerStop = longest
	if res.StopsLeft > 0 {
		res.HangingIn = hangingIn()
	}
	close(stopSampling)
	sampler.Wait()
	res.PeakGoroutines, res.PeakSockets = int(peakG.Load()), int(peakS.Load())
	for i := range n {
		if everElected[i].Load() {
			res.EverElected++
		}
	}
	if res.StopsLeft == 0 {
		readers.Wait() // every channel is closed once Stop returned
	}
	res.StoreErrs = storeErrs.snapshot()
	return res
}

// Environment variables of the limits measurements (the TestRawLimits of
// the adapters' packages).
const (
	EnvLimits      = "LEADERSHIP_RAW_LIMITS"   // "1" runs them
	EnvLimitsSizes = "LEADERSHIP_RAW_LIMITS_N" // numbers of elections, comma-separated
)

// LimitSizes returns the numbers of elections a limits measurement runs:
// those in LEADERSHIP_RAW_LIMITS_N, or defaults. It skips t unless
// LEADERSHIP_RAW_LIMITS is 1.
func LimitSizes(t testing.TB, defaults ...int) []int {
	t.Helper()
	if os.Getenv(EnvLimits) != "1" {
		t.Skipf("%s is not 1: measures how many elections one raw kvtools store carries", EnvLimits)
	}
	v := os.Getenv(EnvLimitsSizes)
	if v == "" {
		return defaults
	}
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: %q is not a positive number", EnvLimitsSizes, v, f)
		}
		out = append(out, n)
	}
	return out
}

// hangingIn counts the goroutines of the election engine by the first
// frame of their stack that is in a store's client library (or, for none,
// their top frame): where Stop waits when it does not return.
func hangingIn() map[string]int {
	out := make(map[string]int)
	for g := range stacks() {
		if !strings.Contains(g, "leadership-go/leadership.(*") || strings.Contains(g, "electiontest") {
			continue
		}
		var top, lib string
		for line := range strings.SplitSeq(g, "\n") {
			if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "goroutine ") || line == "" {
				continue
			}
			fn := line
			if i := strings.LastIndexByte(fn, '('); i > 0 {
				fn = fn[:i]
			}
			if top == "" {
				top = fn
			}
			if lib == "" && (strings.Contains(fn, "kvtools/") || strings.Contains(fn, "go-redis") ||
				strings.Contains(fn, "go-zookeeper") || strings.Contains(fn, "consul/api") || strings.Contains(fn, "etcd.io")) {
				lib = fn
			}
		}
		if lib == "" {
			lib = top
		}
		out[lib]++
	}
	return out
}

// LeftRunning waits up to wait for the goroutines whose stack mentions
// pkg (for instance "github.com/kvtools/redis.") to end, and returns how
// many are still running then.
func LeftRunning(pkg string, wait time.Duration) int {
	deadline := time.Now().Add(wait)
	for {
		n := 0
		for g := range stacks() {
			if strings.Contains(g, pkg) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stacks returns the stacks of every goroutine, one string each.
func stacks() iter.Seq[string] {
	buf := make([]byte, 64<<20)
	return strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n")
}
