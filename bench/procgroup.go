package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Events of the cross-process mode besides evElected, evStepDown and
// evFollower (util.go).
const (
	evReady    evKind = iota + 100 // the child is up
	evRelease                      // the child is about to call Stop (etcd: Resign)
	evReleased                     // etcd: Resign returned
	evStopped                      // Stop returned (etcd: session closed)
	evCall                         // a store call began (name "M>") or returned ("M<")
	evWatch                        // a store watch delivered an event
	evError                        // a store error, or the child's fatal one
	evExit                         // the child process ended (stamped by the parent)
)

// procKinds maps the protocol's kinds to the recorder's.
var procKinds = map[string]evKind{
	pkReady: evReady, pkElected: evElected, pkStepDown: evStepDown, pkLeader: evFollower,
	pkRelease: evRelease, pkReleased: evReleased, pkStopped: evStopped, pkCall: evCall,
	pkWatch: evWatch, pkError: evError,
}

// toEvent converts a child's event line into a recorder event of member
// who; its time is the child's stamp on the shared clock.
func toEvent(who int, e procEvent) (event, bool) {
	k, ok := procKinds[e.Kind]
	if !ok {
		return event{}, false
	}
	ev := event{at: monoTime(e.At), kind: k, who: who, token: e.Token, name: e.Arg}
	if k == evElected {
		ev.val = e.Arg == "true"
		ev.name = ""
	}
	return ev, true
}

// monoTime makes a CLOCK_MONOTONIC reading a time.Time, so that stamps of
// different processes subtract with time.Time.Sub.
func monoTime(ns int64) time.Time { return time.Unix(0, ns) }

// procNode is one child process.
type procNode struct {
	idx    int
	name   string
	role   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
	dead   bool // killed, stopped or exited: not a leader any more
}

// procGroup is one election whose every participant is a child process.
type procGroup struct {
	name   string // backend, for messages
	base   childSpec
	exe    string
	rec    *recorder
	nodes  []*procNode
	reads  sync.WaitGroup
	stderr io.Writer
}

func newProcGroup(name string, base childSpec) (*procGroup, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program to re-execute it: %w", err)
	}
	return &procGroup{name: name, base: base, exe: exe, rec: newRecorder(), stderr: stderr}, nil
}

// spawn starts a child in role named name and waits until it is up.
func (g *procGroup) spawn(ctx context.Context, role, name string) (*procNode, error) {
	spec := g.base
	spec.Role, spec.Node = role, name
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(g.exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	cmd.Stderr = g.stderr
	dieWithParent(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start child %s: %w", name, err)
	}
	n := &procNode{idx: len(g.nodes), name: name, role: role, cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	g.nodes = append(g.nodes, n)
	from := g.rec.mark()
	g.reads.Go(func() { g.read(n, stdout) })
	e, err := g.rec.waitFor(ctx, from, openTimeout+5*time.Second, func(e event) bool {
		return e.who == n.idx && (e.kind == evReady || e.kind == evExit)
	})
	if err != nil {
		return n, fmt.Errorf("child %s did not start: %w", name, err)
	}
	if e.kind == evExit {
		return n, fmt.Errorf("child %s ended at start: %s", name, e.name)
	}
	return n, nil
}

// read records a child's event lines until its stdout closes, then waits
// for the process and records its exit.
func (g *procGroup) read(n *procNode, out io.Reader) {
	sc := bufio.NewScanner(out)
	var fatal string
	for sc.Scan() {
		pe, err := parseProcEvent(sc.Text())
		if err != nil {
			fmt.Fprintf(g.stderr, "bench: %s child %s: %v\n", g.name, n.name, err)
			continue
		}
		if e, ok := toEvent(n.idx, pe); ok {
			if e.kind == evError && strings.HasPrefix(e.name, "fatal: ") {
				fatal = e.name
			}
			g.rec.add(e)
		}
	}
	err := n.cmd.Wait()
	why := fatal
	if why == "" && err != nil {
		why = err.Error()
	}
	g.rec.add(event{at: monoTime(monoNow()), kind: evExit, who: n.idx, name: why})
	close(n.exited)
}

// command sends a command line to a child.
func (g *procGroup) command(n *procNode, c string) error {
	_, err := io.WriteString(n.stdin, c+"\n")
	return err
}

// kill sends SIGKILL to a child by its PID and returns the moment, on the
// shared clock, right before the signal.
func (g *procGroup) kill(n *procNode) (time.Time, error) {
	n.dead = true
	t0 := monoTime(monoNow())
	return t0, n.cmd.Process.Kill()
}

// waitExit waits for a child to end; past closeTimeout it is killed.
func (g *procGroup) waitExit(n *procNode) error {
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-n.exited:
		return nil
	case <-t.C:
		_ = n.cmd.Process.Kill()
		<-n.exited
		return fmt.Errorf("child %s did not end within %v; killed", n.name, closeTimeout)
	}
}

// teardown ends every child: closing its stdin stops it, and one that
// does not end is killed by its PID.
func (g *procGroup) teardown() error {
	var errs []error
	for _, n := range g.nodes {
		n.dead = true
		_ = n.stdin.Close()
	}
	for _, n := range g.nodes {
		errs = append(errs, g.waitExit(n))
	}
	errs = append(errs, withTimeout("the child readers of "+g.name, closeTimeout, g.reads.Wait))
	return errors.Join(errs...)
}

// leader returns the live candidate whose last elected event said true,
// or -1.
func (g *procGroup) leader(evs []event) int {
	return electedLeader(evs, func(who int) bool { return !g.nodes[who].dead })
}

// waitElected waits for a candidate other than lead to be elected after
// mark from.
func (g *procGroup) waitElected(ctx context.Context, from, lead int, timeout time.Duration) (event, error) {
	return g.rec.waitFor(ctx, from, timeout, func(e event) bool {
		return e.kind == evElected && e.val && e.who != lead && !g.nodes[e.who].dead
	})
}

// waitFollower waits for a follower event naming name after mark from.
func (g *procGroup) waitFollower(ctx context.Context, from int, name string, timeout time.Duration) (event, error) {
	return g.rec.waitFor(ctx, from, timeout, func(e event) bool { return e.kind == evFollower && e.name == name })
}

// eventOf returns the first event of kind by who after mark from.
func (g *procGroup) eventOf(ctx context.Context, from, who int, kind evKind, timeout time.Duration) (event, error) {
	return g.rec.waitFor(ctx, from, timeout, func(e event) bool { return e.kind == kind && e.who == who })
}
