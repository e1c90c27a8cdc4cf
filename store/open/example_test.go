package open_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/open"
)

// A store by URL, and an election on it. Changing the URL, and importing
// the backend's adapter (or store/all), is all it takes to run on etcd,
// Consul, ZooKeeper, Redis, PostgreSQL or Kubernetes.
func ExampleStore() {
	ctx := context.Background()
	kv, err := open.Store(ctx, "memory://example-open")
	if err != nil {
		panic(err)
	}
	defer kv.Close()

	c := leadership.NewCandidate(kv, "jobs/nightly", "node-1", 15*time.Second)
	defer c.Stop()
	electedCh, _, err := c.RunForElection()
	if err != nil {
		panic(err)
	}
	for isElected := range electedCh { // false first, then true once elected
		if isElected {
			break
		}
	}
	term, _ := c.CurrentTerm()
	fmt.Println("leading, token", term.Token)

	_, err = open.Store(ctx, "memory://") // refused: no name
	var ce *open.ConfigError
	fmt.Println("malformed URL is a ConfigError:", errors.As(err, &ce))
	// Output:
	// leading, token 1
	// malformed URL is a ConfigError: true
}

// The store named by $LEADERSHIP_STORE, as the command reads it.
func ExampleFromEnv() {
	os.Setenv(open.EnvVar, "memory://example-env")
	defer os.Unsetenv(open.EnvVar)

	kv, err := open.FromEnv(context.Background(), "")
	if err != nil {
		panic(err)
	}
	defer kv.Close()
	fmt.Println("opened the store of", open.EnvVar)
	// Output:
	// opened the store of LEADERSHIP_STORE
}
