package leadership_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/memory"
)

// A candidate on the embedded store: false first, then true once elected.
func ExampleCandidate() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-candidate"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	underwood := leadership.NewCandidate(client, "service/swarm/leader", "underwood", 15*time.Second)
	electedCh, _, err := underwood.RunForElection()
	if err != nil {
		panic(err)
	}
	fmt.Println("elected:", <-electedCh)
	fmt.Println("elected:", <-electedCh)
	term, _ := underwood.CurrentTerm()
	fmt.Println("fencing token:", term.Token)

	underwood.Stop()
	fmt.Println("elected:", <-electedCh) // the last value: Stop ended the term
	_, open := <-electedCh
	fmt.Println("open:", open)
	// Output:
	// elected: false
	// elected: true
	// fencing token: 1
	// elected: false
	// open: false
}

// A follower names the current leader first, then every change.
func ExampleFollower() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-follower"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	follower := leadership.NewFollower(client, "service/swarm/leader")
	leaderCh, _, err := follower.FollowElection()
	if err != nil {
		panic(err)
	}
	defer follower.Stop()
	fmt.Printf("leader: %q\n", <-leaderCh)

	frank := leadership.NewCandidate(client, "service/swarm/leader", "frank", 15*time.Second)
	if _, _, err := frank.RunForElection(); err != nil {
		panic(err)
	}
	fmt.Printf("leader: %q\n", <-leaderCh)
	frank.Stop() // releases at once: no wait for the TTL
	fmt.Printf("leader: %q\n", <-leaderCh)
	// Output:
	// leader: ""
	// leader: "frank"
	// leader: ""
}

// The callback style: the leader's work runs under a context that ends the
// moment leadership does.
func ExampleCandidate_Run() {
	ctx, cancel := context.WithCancel(context.Background())
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-run"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	claire := leadership.NewCandidate(client, "jobs/nightly", "claire", 15*time.Second)
	var why leadership.Reason
	err = claire.Run(ctx, leadership.Callbacks{
		OnStartedLeading: func(leaderCtx context.Context, term leadership.Term) {
			fmt.Println("leading, token", term.Token)
			cancel() // the work is done: end the campaign
			<-leaderCtx.Done()
			fmt.Println("work stopped")
		},
		OnStoppedLeading: func(_ leadership.Term, r leadership.Reason) { why = r },
	})
	fmt.Println("Run returned:", err, "- the term ended:", why.String())
	// Output:
	// leading, token 1
	// work stopped
	// Run returned: <nil> - the term ended: stopped
}

// The channel style with the term: once the elected channel says true,
// CurrentTerm gives the term led (its fencing token), and the term's
// context says why it ended.
func ExampleCandidate_CurrentTerm() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-current-term"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	doug := leadership.NewCandidate(client, "jobs/billing", "doug", 15*time.Second)
	defer doug.Stop()
	term := leadOnce(doug)
	fmt.Println("leading, token", term.Token)

	doug.Resign()
	<-term.Context().Done()
	fmt.Println("ended:", errors.Is(context.Cause(term.Context()), leadership.ErrResigned))
	// Output:
	// leading, token 1
	// ended: true
}

// leadOnce starts c and returns its term once it is elected: the elected
// channel says true, and CurrentTerm gives the term.
func leadOnce(c *leadership.Candidate) leadership.Term {
	electedCh, _, err := c.RunForElection()
	if err != nil {
		panic(err)
	}
	return termOnceElected(c, electedCh)
}

// termOnceElected reads electedCh until c leads and returns its term.
func termOnceElected(c *leadership.Candidate, electedCh <-chan bool) leadership.Term {
	for isElected := range electedCh {
		if term, ok := c.CurrentTerm(); isElected && ok {
			return term
		}
	}
	panic("stopped before it was elected")
}

// The leader publishes its address beside its name; a follower, such as a
// proxy, routes by it.
func ExampleCandidate_Proclaim() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-proclaim"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	follower := leadership.NewFollower(client, "api/primary")
	if _, _, err := follower.FollowElection(); err != nil {
		panic(err)
	}
	defer follower.Stop()
	observations := follower.Status()

	remy := leadership.NewCandidate(client, "api/primary", "remy", 15*time.Second, leadership.WithValue("10.0.0.7:8080"))
	defer remy.Stop()
	leadOnce(remy)
	for o := range observations {
		if o.Leader != "" {
			fmt.Println(o.Leader, "at", o.Value)
			break
		}
	}
	if err := remy.Proclaim(ctx, "10.0.0.7:9090"); err != nil { // moved: same term, new value
		panic(err)
	}
	for o := range observations {
		if o.Value == "10.0.0.7:9090" {
			fmt.Println(o.Leader, "at", o.Value)
			break
		}
	}
	// Output:
	// remy at 10.0.0.7:8080
	// remy at 10.0.0.7:9090
}

// A graceful handoff to a named successor, such as before a rolling
// restart of the leader's host.
func ExampleCandidate_HandOff() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-handoff"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	old := leadership.NewCandidate(client, "jobs/ledger", "host-1", 15*time.Second)
	defer old.Stop()
	term := leadOnce(old)
	next := leadership.NewCandidate(client, "jobs/ledger", "host-2", 15*time.Second)
	defer next.Stop()
	electedCh, _, err := next.RunForElection()
	if err != nil {
		panic(err)
	}
	for s := range next.Status() {
		if s.Leader == "host-1" { // host-2 has seen the leader
			break
		}
	}

	if err := old.HandOff(ctx, "host-2"); err != nil {
		panic(err)
	}
	nt := termOnceElected(next, electedCh) // already leading, or about to
	fmt.Println("host-2 leads with a greater token:", nt.Token > term.Token)
	// Output:
	// host-2 leads with a greater token: true
}

// The status stream: the role, the leader and the term after every change
// (Comcast's go-leaderelection Status).
func ExampleCandidate_Status() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-status"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	zoe := leadership.NewCandidate(client, "jobs/report", "zoe", 15*time.Second)
	if _, _, err := zoe.RunForElection(); err != nil {
		panic(err)
	}
	for s := range zoe.Status() {
		fmt.Printf("%v leader=%q term=%d\n", s.Role, s.Leader, s.Token)
		if s.Role == leadership.RoleLeader {
			zoe.Stop() // steps down, releases, stops: the stream closes
		}
	}
	// Output:
	// follower leader="" term=0
	// leader leader="zoe" term=1
	// follower leader="" term=1
	// stopped leader="" term=1
}

// Resign steps down at once and lets a waiting candidate win; the resigned
// candidate competes again after its holdoff.
func ExampleCandidate_Resign() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-resign"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	peter := leadership.NewCandidate(client, "jobs/report", "peter", 15*time.Second)
	defer peter.Stop()
	leadOnce(peter)
	linda := leadership.NewCandidate(client, "jobs/report", "linda", 15*time.Second)
	defer linda.Stop()
	elected, _, err := linda.RunForElection()
	if err != nil {
		panic(err)
	}
	<-elected // false: peter leads

	peter.Resign()
	fmt.Println("peter leads:", peter.IsLeader())
	fmt.Println("linda elected:", <-elected)
	// Output:
	// peter leads: false
	// linda elected: true
}

// Ending an election tells every candidate and follower of the key.
func ExampleEndElection() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"example-end"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	doug := leadership.NewCandidate(client, "service/primary", "doug", 15*time.Second)
	_, errCh, err := doug.RunForElection()
	if err != nil {
		panic(err)
	}
	if err := leadership.EndElection(ctx, client, "service/primary"); err != nil {
		panic(err)
	}
	var last error
	for err := range errCh {
		fmt.Println(err)
		last = err
	}
	fmt.Println("ended:", errors.Is(last, leadership.ErrElectionEnded))
	// Output:
	// leadership: election ended
	// ended: true
}

// The seeds' README examples, run as tests.

// The examples of docker/leadership's README, as written there, on a store
// built by valkeyrie.NewStore (with the sleep shortened).
func TestSeedReadmeExamples(t *testing.T) {
	ctx := context.Background()
	// Create a store using valkeyrie.
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"readme"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	underwood := leadership.NewCandidate(client, "service/swarm/leader", "underwood", 15*time.Second,
		leadership.WithTimings(leadership.Timings{ResignHoldoff: 100 * time.Millisecond}))
	electedCh, _, err := underwood.RunForElection()
	if err != nil {
		log.Fatal("Cannot run for election, store is probably down")
	}

	follower := leadership.NewFollower(client, "service/swarm/leader")
	leaderCh, _, err := follower.FollowElection()
	if err != nil {
		log.Fatal("Cannot follow the election, store is probably down")
	}

	var mu sync.Mutex
	var candidateLog, followerLog []string
	var wg sync.WaitGroup
	wg.Go(func() {
		wins := 0
		for isElected := range electedCh {
			// This loop will run every time there is a change in our leadership
			// status.
			if isElected {
				// We won the election - we are now the leader.
				mu.Lock()
				candidateLog = append(candidateLog, "I won the election! I'm now the leader")
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
				wins++
				if wins == 2 {
					underwood.Stop() // ends the loop: the channel closes
					continue
				}
				// Tired of being a leader? You can resign anytime.
				underwood.Resign()
			} else {
				mu.Lock()
				candidateLog = append(candidateLog, "Lost the election, let's try another time")
				mu.Unlock()
			}
		}
	})
	wg.Go(func() {
		for leader := range leaderCh {
			// Leader is a string containing the value passed to `NewCandidate`.
			mu.Lock()
			followerLog = append(followerLog, fmt.Sprintf("%s is now the leader", leader))
			mu.Unlock()
			if leader == "underwood" {
				mu.Lock()
				n := len(followerLog)
				mu.Unlock()
				if n >= 3 {
					follower.Stop()
				}
			}
		}
	})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		underwood.Stop()
		follower.Stop()
		<-done
		t.Fatalf("the README loops did not finish: %v / %v", candidateLog, followerLog)
	}
	want := []string{
		"Lost the election, let's try another time",
		"I won the election! I'm now the leader",
		"Lost the election, let's try another time",
		"I won the election! I'm now the leader",
		// Stop ended the second term: its false is the last value before the close.
		"Lost the election, let's try another time",
	}
	if fmt.Sprint(candidateLog) != fmt.Sprint(want) {
		t.Fatalf("candidate loop saw %q, want %q", candidateLog, want)
	}
	// The follower saw the first leader, the resignation, and the leader
	// again; once stopped it names no one: its last value is "".
	if n := len(followerLog); n < 2 || followerLog[n-2] != "underwood is now the leader" || followerLog[n-1] != " is now the leader" {
		t.Fatalf("follower loop saw %q", followerLog)
	}
}

// The README's fault-tolerance pattern: run, and on an error give up and
// retry later. The candidate keeps campaigning by itself through store
// errors, so the retry finds it still running (ErrAlreadyRunning) and it
// leads again once the store is back.
func TestSeedReadmeFaultTolerance(t *testing.T) {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, memory.StoreName, []string{"readme-faults"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	underwood := leadership.NewCandidate(client, "service/swarm/leader", "underwood", time.Second)
	defer underwood.Stop()

	gotError := make(chan error, 1)
	run := func(candidate *leadership.Candidate) {
		electedCh, errCh, err := candidate.RunForElection()
		if err != nil {
			return
		}
		for {
			select {
			case <-electedCh:
			case err := <-errCh:
				gotError <- err
				return
			}
		}
	}
	go run(underwood)
	waitFor(t, underwood.IsLeader)
	memoryStop("readme-faults")
	select {
	case err := <-gotError:
		if err == nil {
			t.Fatal("nil error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error reported while the store was down")
	}
	waitFor(t, func() bool { return !underwood.IsLeader() })
	memoryStart("readme-faults")
	waitFor(t, underwood.IsLeader)
	if _, _, err := underwood.RunForElection(); err == nil {
		t.Fatal("a second RunForElection succeeded")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// A fenced write: it lands only while the election record still holds the
// term it is made through, checked by the store itself.
func ExampleCandidate_FencedPut() {
	ctx := context.Background()
	kv, err := memory.Open(ctx, memory.Config{Name: "example-fenced"})
	if err != nil {
		panic(err)
	}
	defer kv.Close()

	eve := leadership.NewCandidate(kv, "jobs/ledger", "eve", 15*time.Second)
	defer eve.Stop()
	term := leadOnce(eve)
	fmt.Println("lands:", eve.FencedPut(ctx, term, "ledger/head", []byte("42")))

	eve.Resign()
	mallory := leadership.NewCandidate(kv, "jobs/ledger", "mallory", 15*time.Second)
	defer mallory.Stop()
	leadOnce(mallory)                                           // the record holds mallory's term now
	err = eve.FencedPut(ctx, term, "ledger/head", []byte("43")) // a late write through eve's term
	fmt.Println("refused:", errors.Is(err, leadership.ErrFenced))
	// Output:
	// lands: <nil>
	// refused: true
}

// A leader gives up its term on a schedule so that another candidate can
// take a turn: "@every d" after each term began, or a cron line such as
// "0 0 * * *" (every midnight).
func ExampleWithRelinquishSchedule() {
	client, err := valkeyrie.NewStore(context.Background(), memory.StoreName, []string{"example-relinquish"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	c := leadership.NewCandidate(client, "jobs/report", "host-1", 15*time.Second,
		leadership.WithRelinquishSchedule("@every 200ms"))
	defer c.Stop()
	term := leadOnce(c)
	<-term.Context().Done()
	fmt.Println("term ended:", errors.Is(context.Cause(term.Context()), leadership.ErrRelinquished))
	// Output:
	// term ended: true
}
