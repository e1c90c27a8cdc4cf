package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/store/open"
)

// storeHelp is the help line of --store, shared by every command that
// joins an election.
const storeHelp = "store `URL`, required: memory://NAME, etcd://h1:2379,h2:2379, consul://h:8500, " +
	"zk://h:2181, redis://h:6379, postgres://user:pass@h:5432/db?sslmode=verify-full&sslrootcert=CA, k8s://NAMESPACE (see docs/cli.md)"

// storeAbout is the paragraph every election command's help ends its
// description with.
const storeAbout = `

The store is named by a URL (--store or $LEADERSHIP_STORE), as in
store/open: memory://NAME is the embedded store, shared only within one
process; etcd://, consul://, zk://, redis:// and postgres:// reach a server,
k8s://NAMESPACE a Kubernetes API server (a Lease per key).`

// electionFlags are the flags every election command takes.
type electionFlags struct {
	store     string
	storeFile string
	key       string
}

// add defines --store and --key on fs.
func (e *electionFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&e.store, "store", "", storeHelp)
	fs.StringVar(&e.storeFile, "store-file", "", "read the store URL from `FILE` (mode 600 or stricter) instead of --store: "+
		"a URL with a password then shows in no process's command line or environment")
	fs.StringVar(&e.key, "key", "", "election `KEY` in the store, required")
}

// validate checks that --store (or --store-file, whose URL it reads) and
// --key were given.
func (e *electionFlags) validate() error {
	if e.storeFile != "" {
		if strings.TrimSpace(e.store) != "" {
			return usageErrorf("--store-file and --store (or LEADERSHIP_STORE) both given: give one")
		}
		url, err := readStoreFile(e.storeFile)
		if err != nil {
			return err
		}
		e.store = url
	}
	switch {
	case strings.TrimSpace(e.store) == "":
		return usageErrorf("--store is required (or set LEADERSHIP_STORE), as in --store etcd://127.0.0.1:2379")
	case strings.Trim(e.key, "/ ") == "":
		return usageErrorf("--key is required (or set LEADERSHIP_KEY): the election's key, as in --key service/leader")
	}
	return nil
}

// readStoreFile reads a store URL from path, refusing a file that its
// group or others may read or write: the URL may hold a password.
func readStoreFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", usageErrorf("--store-file: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return "", usageErrorf("--store-file %s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", usageErrorf("--store-file %s: readable or writable by group or others (mode %04o): it may hold a password; chmod 600 it", path, perm)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", usageErrorf("--store-file: %v", err)
	}
	url := strings.TrimSpace(string(b))
	if url == "" {
		return "", usageErrorf("--store-file %s: empty", path)
	}
	return url, nil
}

// redacted is the store URL with its secrets masked, for messages.
func (e *electionFlags) redacted() string {
	if s, err := open.Parse(e.store); err == nil {
		return s.String()
	}
	return "the store"
}

// openStoreFunc opens a store from its URL; tests replace it to get hold
// of the handles the commands open.
var openStoreFunc = open.Store

// openTimeout bounds opening the store.
const openTimeout = 30 * time.Second

// errOpenTimeout is a store that did not open within openTimeout.
var errOpenTimeout = errors.New("no answer in time")

// scheme is the scheme of the --store URL, in lower case.
func (e *electionFlags) scheme() string {
	s, _, _ := strings.Cut(strings.TrimSpace(e.store), "://")
	return strings.ToLower(s)
}

// open opens the store. A malformed URL, an unknown scheme or a backend
// this build lacks is a *usageError; anything else (an unreachable server)
// is a runtime error.
func (e *electionFlags) open(ctx context.Context) (store.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	kv, err := openStoreFunc(ctx, e.store)
	switch {
	case err == nil:
		return kv, nil
	case errors.Is(err, open.ErrBackendLeftOut) && leftOut[backendOfScheme[e.scheme()]] != "":
		return nil, usageErrorf("--store: %s:// cannot be opened: %s", e.scheme(), leftOut[backendOfScheme[e.scheme()]])
	case errors.Is(err, open.ErrInvalidURL):
		return nil, usageErrorf("--store: %v", err)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		err = fmt.Errorf("%w: %w", errOpenTimeout, err)
	}
	return nil, fmt.Errorf("cannot open %s: %w", e.redacted(), err)
}

// startError turns an error of RunForElection or FollowElection into the
// command's error: bad arguments are usage errors, the rest runtime errors.
func startError(err error) error {
	switch {
	case errors.Is(err, leadership.ErrInvalidTTL):
		return usageErrorf("--ttl: %v", err)
	case errors.Is(err, leadership.ErrEmptyKey):
		return usageErrorf("--key: %v", err)
	case errors.Is(err, leadership.ErrEmptyName):
		return usageErrorf("--name: %v", err)
	case errors.Is(err, leadership.ErrInvalidOption):
		return usageErrorf("%v", err)
	}
	return fmt.Errorf("cannot read the election: %w", err)
}

// endedError is the outcome of a command whose election was ended.
func endedError(key string) error {
	return &exitError{code: exitEnded, err: fmt.Errorf("the election at key %q was ended (leadership end)", key)}
}

// logger writes timestamped diagnostic lines, one per call, from any
// goroutine.
type logger struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string // such as "leadership run: "
}

// printf writes one line: the time, the prefix and the message.
func (l *logger) printf(format string, a ...any) {
	msg := oneLine(fmt.Sprintf(format, a...))
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = fmt.Fprintf(l.w, "%s %s%s\n", time.Now().Format("15:04:05.000"), l.prefix, msg)
}

// storeError logs err, received from a store-error channel with ok, unless
// it is the election's end (which the command reports otherwise), and
// returns the channel to go on receiving from: errs, or nil once errs is
// closed.
func (l *logger) storeError(errs <-chan error, err error, ok bool) <-chan error {
	if !ok {
		return nil
	}
	if !errors.Is(err, leadership.ErrElectionEnded) {
		l.printf("%v (retrying)", err)
	}
	return errs
}

// Write lets the logger carry another writer's output (a child's stderr
// when it is not a file) without interleaving it with log lines.
func (l *logger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// observationLine formats a follower's observation as follow and status
// print it: TIME LEADER TERM, with "-" for no leader.
func observationLine(o leadership.Status) string {
	leader := o.Leader
	if leader == "" {
		leader = "-"
	}
	return fmt.Sprintf("%s %s %d", o.At.Format(time.RFC3339Nano), leader, o.Token)
}

// observationJSON is an observation as follow --json and status --json
// print it.
type observationJSON struct {
	Time   string `json:"time"`
	Leader string `json:"leader"`
	Term   uint64 `json:"term"`
}

func toJSON(o leadership.Status) observationJSON {
	return observationJSON{Time: o.At.Format(time.RFC3339Nano), Leader: o.Leader, Term: o.Token}
}

// noArgs refuses arguments for commands that take flags only.
func noArgs(cmd string, args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q (%s takes flags only)", args[0], cmd)
	}
	return nil
}

// follow opens a client of the store and follows the election on it
// (warning on stderr that memory:// is this process's own), retrying a
// store that does not answer its first read (startUntilRead). It
// returns the follower, its store errors, and stop, which stops the
// follower and closes the client.
func (e *electionFlags) follow(ctx context.Context, stderr io.Writer) (f *leadership.Follower, errs <-chan error, stop func(), err error) {
	memoryNotice(stderr, e.store, true)
	var kv store.Store
	start := func() error {
		if kv == nil {
			k, err := e.open(ctx)
			if err != nil {
				return err
			}
			kv = k
		}
		f = leadership.NewFollower(kv, e.key)
		if _, errs, err = f.FollowElection(); err != nil {
			return startError(err)
		}
		return nil
	}
	if err := startUntilRead(ctx, start, 0, &logger{w: stderr, prefix: "leadership: "}); err != nil {
		if kv != nil {
			_ = kv.Close()
		}
		return nil, nil, nil, err
	}
	return f, errs, func() { f.Stop(); _ = kv.Close() }, nil
}

// endedExit documents exit code 4, of every command that watches an
// election until it ends.
const endedExit = "  4  the election was ended (leadership end)\n"

// electionCommand completes c, a command whose flags are the election's
// (--store, --key) and, when jsonUsage is not "", --json with that usage:
// it sets c's synopsis and its setup, which runs run once the flags are
// parsed and valid and no argument is left (asJSON is false without
// --json).
func electionCommand(c command, jsonUsage string, run func(ctx context.Context, ef electionFlags, asJSON bool, s streams) error) *command {
	name := c.name
	c.args = "--store URL --key KEY"
	if jsonUsage != "" {
		c.args += " [--json]"
	}
	c.setup = func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
		var ef electionFlags
		ef.add(fs)
		asJSON := new(bool)
		if jsonUsage != "" {
			asJSON = fs.Bool("json", false, jsonUsage)
		}
		return flagsOnly(name, ef.validate, func(ctx context.Context, s streams) error { return run(ctx, ef, *asJSON, s) })
	}
	return &c
}

// flagsOnly is the run function of the command cmd, which takes flags
// only: it rejects arguments, checks the parsed flags with validate, and
// runs run.
func flagsOnly(cmd string, validate func() error, run func(context.Context, streams) error) func(context.Context, []string, streams) error {
	return func(ctx context.Context, args []string, s streams) error {
		if err := noArgs(cmd, args); err != nil {
			return err
		}
		if err := validate(); err != nil {
			return err
		}
		return run(ctx, s)
	}
}
