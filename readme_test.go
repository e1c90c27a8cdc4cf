package leadership_test

import (
	"context"
	"fmt"
	"log"
	"sync"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/leadership-go/leadership"
)

// The examples of docker/leadership's README, as written there, on a store
// built by valkeyrie.NewStore (with the sleep shortened).
func TestSeedReadmeExamples(t *testing.T) {
	ctx := context.Background()
	// Create a store using valkeyrie.
	client, err := valkeyrie.NewStore(ctx, "memory", []string{"readme"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	underwood := leadership.NewCandidate(client, "service/swarm/leader", "underwood", 15*time.Second,
		leadership.WithResignHoldoff(100*time.Millisecond))
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
	// The follower saw the first leader, the resignation, and the leader again.
	if followerLog[len(followerLog)-1] != "underwood is now the leader" {
		t.Fatalf("follower loop saw %q", followerLog)
	}
}

// The README's fault-tolerance pattern: run, and on an error give up and
// retry later. The candidate keeps campaigning by itself through store
// errors, so the retry finds it still running (ErrAlreadyRunning) and it
// leads again once the store is back.
func TestSeedReadmeFaultTolerance(t *testing.T) {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, "memory", []string{"readme-faults"}, nil)
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
