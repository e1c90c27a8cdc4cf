package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/open"
)

// childEnv carries a child's spec (JSON) from the parent: a process started
// with it set is a child of --processes, not a benchmark run.
const childEnv = "LEADERSHIP_BENCH_CHILD"

// Child roles.
const (
	roleCandidate = "candidate"          // a Candidate of this library
	roleFollower  = "follower"           // a Follower of this library
	roleElection  = "election-candidate" // a participant of etcd's concurrency.Election
	roleObserver  = "election-observer"  // an observer of etcd's concurrency.Election
)

// childSpec is what one child process does.
type childSpec struct {
	Role       string        `json:"role"`
	Node       string        `json:"node"`
	URL        string        `json:"url"`
	Key        string        `json:"key"` // etcd election: the prefix
	TTL        time.Duration `json:"ttl"`
	ClientLogs bool          `json:"client_logs"`
}

// childMain runs a child from its spec in the environment, with events on
// stdout and commands on stdin; it returns the exit code.
func childMain(raw string) int {
	var spec childSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "bench child: bad spec:", err)
		return 2
	}
	if !spec.ClientLogs {
		log.SetOutput(io.Discard)
		goredis.SetLogger(quietLogger{})
	}
	if err := runChild(context.Background(), spec, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bench child %s: %v\n", spec.Node, err)
		return 1
	}
	return 0
}

// runChild runs one role until the parent says stop or closes in.
func runChild(ctx context.Context, spec childSpec, in io.Reader, out io.Writer) error {
	ev := &eventWriter{w: out, node: spec.Node}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmds := make(chan string)
	go func() {
		defer close(cmds)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case cmds <- strings.TrimSpace(sc.Text()):
			case <-ctx.Done():
				return
			}
		}
	}()
	var err error
	switch spec.Role {
	case roleCandidate:
		err = childCandidate(ctx, spec, ev, cmds)
	case roleFollower:
		err = childFollower(ctx, spec, ev, cmds)
	case roleElection:
		err = childElection(ctx, spec, ev, cmds)
	case roleObserver:
		err = childObserver(ctx, spec, ev, cmds)
	default:
		err = fmt.Errorf("unknown role %q", spec.Role)
	}
	if err != nil {
		ev.emit(pkError, 0, monoNow(), "fatal: "+err.Error())
	}
	return err
}

// waitStop returns on the stop command (true) or when the parent closed
// the commands (false).
func waitStop(cmds <-chan string) bool {
	return waitCommand(cmds, cmdStop)
}

// waitCommand returns on the command want (true) or when the parent
// closed the commands (false).
func waitCommand(cmds <-chan string, want string) bool {
	for c := range cmds {
		if c == want {
			return true
		}
	}
	return false
}

// openTraced opens the child's client, wrapped to report its calls.
func openTraced(ctx context.Context, url string, ev *eventWriter) (*tracing, error) {
	octx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	s, err := open.Store(octx, url)
	if err != nil {
		return nil, fmt.Errorf("open a client: %w", err)
	}
	return &tracing{Store: s, ev: ev}, nil
}

// closeTraced closes the client and waits for its watch relays.
func closeTraced(t *tracing) error {
	err := withTimeout("closing the client", closeTimeout, func() { _ = t.Store.Close() })
	if e := withTimeout("the watch relays", closeTimeout, t.relays.Wait); err == nil {
		err = e
	}
	return err
}

func childCandidate(ctx context.Context, spec childSpec, ev *eventWriter, cmds <-chan string) error {
	client, err := openTraced(ctx, spec.URL, ev)
	if err != nil {
		return err
	}
	cand := leadership.NewCandidate(client, spec.Key, spec.Node, spec.TTL)
	elected, errs, err := cand.RunForElection()
	context.AfterFunc(ctx, cand.Stop)
	if err != nil {
		_ = closeTraced(client)
		return fmt.Errorf("run for election: %w", err)
	}
	ev.emit(pkReady, 0, monoNow(), "")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := range elected {
			now := monoNow()
			var token uint64
			if t, ok := cand.CurrentTerm(); v && ok {
				token = t.Token
				go func() {
					<-t.Context().Done()
					ev.emit(pkStepDown, t.Token, monoNow(), "")
				}()
			}
			ev.emit(pkElected, token, now, fmt.Sprint(v))
		}
	}()
	go func() {
		for err := range errs {
			ev.emit(pkError, 0, monoNow(), err.Error())
		}
	}()
	stopped := waitStop(cmds)
	if stopped {
		ev.emit(pkRelease, 0, monoNow(), "")
	}
	cand.Stop()
	ev.emit(pkStopped, 0, monoNow(), "")
	<-done
	if stopped {
		waitCommand(cmds, cmdExit)
	}
	return closeTraced(client)
}

func childFollower(ctx context.Context, spec childSpec, ev *eventWriter, cmds <-chan string) error {
	client, err := openTraced(ctx, spec.URL, ev)
	if err != nil {
		return err
	}
	fol := leadership.NewFollower(client, spec.Key)
	leaders, errs, err := fol.FollowElection()
	context.AfterFunc(ctx, fol.Stop)
	if err != nil {
		_ = closeTraced(client)
		return fmt.Errorf("follow the election: %w", err)
	}
	ev.emit(pkReady, 0, monoNow(), "")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for name := range leaders {
			ev.emit(pkLeader, 0, monoNow(), name)
		}
	}()
	go func() {
		for err := range errs {
			ev.emit(pkError, 0, monoNow(), err.Error())
		}
	}()
	waitStop(cmds)
	fol.Stop()
	ev.emit(pkStopped, 0, monoNow(), "")
	<-done
	return closeTraced(client)
}
