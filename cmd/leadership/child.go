package main

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leadership-go/leadership"
)

// runner starts children.
type runner struct {
	cfg         runConfig
	path        string
	s           streams
	log         *logger
	childStderr io.Writer
}

// childProc is one run of COMMAND, for one term.
type childProc struct {
	term      leadership.Term
	pid       int
	started   time.Time // when it started
	grace     time.Duration
	log       *logger
	stopReq   chan string   // a reason to stop, sent once by stop
	done      chan struct{} // closed once the child has been reaped
	state     *os.ProcessState
	waitErr   error
	signalled atomic.Bool // set before the first signal is sent
}

// start starts the child for term and returns once it runs (or could not
// start). It is stopped when the term's context ends or stop is called.
//
// On Linux the child is started with the parent-death signal SIGKILL
// (childSysProcAttr), so that the kernel kills it if run dies, even by
// SIGKILL. Linux sends that signal when the *thread* that forked the child
// exits, not the process, and the Go runtime may end a thread (it does when
// a goroutine locked to it exits): so the goroutine that starts the child
// locks itself to its OS thread first and stays locked, blocked in Wait,
// for the child's whole life; only once the child is reaped is the thread
// released. The child also gets a process group of its own (its pid), so
// that stopping it also reaches what it started.
func (r *runner) start(term leadership.Term) (*childProc, error) {
	c := &childProc{
		term:    term,
		grace:   r.cfg.graceD(),
		log:     r.log,
		stopReq: make(chan string, 1),
		done:    make(chan struct{}),
	}
	cmd := exec.Command(r.path, r.cfg.argv[1:]...)
	cmd.Args[0] = r.cfg.argv[0]
	cmd.Env = append(childEnviron(os.Environ()),
		"LEADERSHIP_TOKEN="+strconv.FormatUint(term.Token, 10),
		"LEADERSHIP_LEADER="+r.cfg.name,
		"LEADERSHIP_KEY="+r.cfg.key,
		"LEADERSHIP_TERM_STARTED="+term.Began.UTC().Format(time.RFC3339Nano),
	)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r.s.stdin, r.s.stdout, r.childStderr
	cmd.SysProcAttr = childSysProcAttr()
	// exec.Cmd must not wait for its copying goroutines if the child left
	// a descendant holding the pipes: the group is killed anyway.
	cmd.WaitDelay = time.Second

	started := make(chan error, 1)
	go func() {
		// Never unlocked before the child is reaped: see above.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		c.pid, c.started = cmd.Process.Pid, time.Now()
		started <- nil
		go c.watch()
		c.waitErr = cmd.Wait()
		c.state = cmd.ProcessState
		// Whatever the child left in its group goes with it. The group
		// cannot have been reused yet: its id is the child's pid, just
		// reaped by this goroutine.
		_ = signalGroup(c.pid, syscall.SIGKILL)
		close(c.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	r.log.printf("started COMMAND, pid %d, token %d", c.pid, term.Token)
	return c, nil
}

// watch stops the child when its term ends or stop is called: SIGTERM to
// its process group, then SIGKILL after the grace period.
func (c *childProc) watch() {
	var why string
	select {
	case <-c.done:
		return
	case <-c.term.Context().Done():
		why = "leadership ended"
	case why = <-c.stopReq:
	}
	c.signalled.Store(true)
	c.log.printf("%s: stopping COMMAND, pid %d, token %d (SIGTERM, SIGKILL after %v)", why, c.pid, c.term.Token, c.grace)
	_ = signalGroup(c.pid, syscall.SIGTERM)
	t := time.NewTimer(c.grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.log.printf("COMMAND, pid %d, still running after %v: SIGKILL", c.pid, c.grace)
		_ = signalGroup(c.pid, syscall.SIGKILL)
	}
}

// stop asks the watcher to stop the child; wait on done.
func (c *childProc) stop(why string) {
	select {
	case c.stopReq <- why:
	default:
	}
}

// stopped reports whether run signalled the child (valid after done).
func (c *childProc) stopped() bool { return c.signalled.Load() }

// exitCode is the child's exit status, 128+N when signal N ended it
// (valid after done).
func (c *childProc) exitCode() int {
	if c.state == nil {
		return exitFailure
	}
	if ws, ok := c.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return c.state.ExitCode()
}

// logExit logs how the child ended.
func (r *runner) logExit(c *childProc) {
	how := "exited"
	if c.state != nil {
		how = c.state.String()
	} else if c.waitErr != nil {
		how = c.waitErr.Error()
	}
	r.log.printf("COMMAND, pid %d, token %d, is gone: %s", c.pid, c.term.Token, how)
}

// childEnviron is env without the variables that name the store: COMMAND
// gets no credential it was not given on purpose (the store URL may hold a
// password). It learns its term from LEADERSHIP_TOKEN and the others set
// below, and a COMMAND that needs the store is given its own URL.
func childEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == envName("store") || name == envName("store-file") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
