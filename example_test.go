package leadership_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/leadership-go/leadership"
)

// A candidate on the embedded store: false first, then true once elected.
func ExampleCandidate() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, "memory", []string{"example-candidate"}, nil)
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
	client, err := valkeyrie.NewStore(ctx, "memory", []string{"example-follower"}, nil)
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
	client, err := valkeyrie.NewStore(ctx, "memory", []string{"example-run"}, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	claire := leadership.NewCandidate(client, "jobs/nightly", "claire", 15*time.Second)
	err = claire.Run(ctx, leadership.Callbacks{
		OnStartedLeading: func(leaderCtx context.Context, term leadership.Term) {
			fmt.Println("leading, token", term.Token)
			cancel() // the work is done: end the campaign
			<-leaderCtx.Done()
			fmt.Println("work stopped")
		},
	})
	fmt.Println("Run returned:", err)
	// Output:
	// leading, token 1
	// work stopped
	// Run returned: <nil>
}

// Ending an election tells every candidate and follower of the key.
func ExampleEndElection() {
	ctx := context.Background()
	client, err := valkeyrie.NewStore(ctx, "memory", []string{"example-end"}, nil)
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
	for err := range errCh {
		fmt.Println(err)
	}
	fmt.Println("ended:", doug.Err() == leadership.ErrElectionEnded)
	// Output:
	// leadership: election ended
	// ended: true
}
