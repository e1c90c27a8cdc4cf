// Command leadership runs and observes leader elections built on the
// github.com/leadership-go/leadership library.
//
// Each subcommand lives in its own file and is listed in commands below;
// every flag of every subcommand can also be set from an environment
// variable (see flags.go). Run "leadership help" for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

// Exit codes, documented in the usage text. run also exits with its
// COMMAND's status when COMMAND ends by itself.
const (
	exitOK          = 0   // success
	exitFailure     = 1   // the command ran and failed (store, election, timeout)
	exitUsage       = 2   // unknown command, bad flag or bad value
	exitNoLeader    = 3   // status: the election has no leader
	exitEnded       = 4   // follow, proxy, run, status: the election was ended (EndElection)
	exitUnconfirmed = 5   // status: the holder was not seen renewing its lease within its TTL
	exitNotElected  = 6   // run --try: not elected within the time given
	exitNoExec      = 127 // run: COMMAND cannot be found or started
)

// streams are the standard streams a command uses. stdin may be nil (no
// input).
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one subcommand of leadership.
type command struct {
	name    string // as typed after "leadership"
	args    string // the synopsis after the name, such as "[flags]"
	summary string // one line for the top-level usage
	about   string // what the command does, shown by --help before the flags

	exits string // the command's own exit codes, added to the common ones in --help

	// setup defines the command's flags on fs and returns the function that
	// runs the command once the flags are parsed, with the arguments left
	// after the flags. It returns a *usageError for bad values and an
	// *exitError for a specific exit code. ctx ends on SIGINT or SIGTERM.
	setup func(fs *flag.FlagSet) func(ctx context.Context, args []string, s streams) error
}

// commands lists the subcommands in the order the usage text shows them.
// Adding a subcommand is adding its file and one line here.
func commands() []*command {
	return []*command{
		runCommand(),
		followCommand(),
		statusCommand(),
		proxyCommand(),
		endCommand(),
		deleteCommand(),
		demoCommand(),
	}
}

// main runs the command line and exits with its status. The first SIGINT or
// SIGTERM cancels the command's context (each command then shuts down
// cleanly); a second one kills the process as usual.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // restore the default action for a second signal
	}()
	os.Exit(runContext(ctx, os.Args[1:], streams{os.Stdin, os.Stdout, os.Stderr}))
}

// run executes the command line args (without the program name), writing
// results to stdout and diagnostics to stderr, and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, streams{stdout: stdout, stderr: stderr})
}

// runContext is run under ctx, whose end asks the command to stop (as
// SIGINT does), with the given streams.
func runContext(ctx context.Context, args []string, s streams) int {
	stdout, stderr := s.stdout, s.stderr
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	case "-version", "--version", "version":
		if len(rest) > 0 {
			return usageFail(stderr, "", usageErrorf("%s takes no arguments", name))
		}
		_, _ = fmt.Fprintln(stdout, versionLine())
		return exitOK
	case "help":
		if len(rest) == 0 {
			printUsage(stdout)
			return exitOK
		}
		cmd := lookup(rest[0])
		if cmd == nil || len(rest) > 1 {
			return usageFail(stderr, "", unknownCommand(strings.Join(rest, " ")))
		}
		return cmd.execute(ctx, []string{"--help"}, s)
	}
	if strings.HasPrefix(name, "-") {
		return usageFail(stderr, "", usageErrorf("unknown flag %s (commands take flags after their name; see 'leadership --help')", name))
	}
	cmd := lookup(name)
	if cmd == nil {
		return usageFail(stderr, "", unknownCommand(name))
	}
	return cmd.execute(ctx, rest, s)
}

// versionLine is what --version prints: the module's version as the Go
// tool stamped it into the binary ("(devel)" when built from a working
// tree, or when there is no build information) and the Go version.
func versionLine() string {
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	return fmt.Sprintf("leadership %s %s %s/%s", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// lookup returns the subcommand called name, or nil.
func lookup(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// unknownCommand is the usage error for a subcommand that does not exist.
func unknownCommand(name string) error {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return usageErrorf("unknown command %q (commands: %s; see 'leadership --help')", name, strings.Join(names, ", "))
}

// execute parses the command's flags, environment variables and arguments,
// runs it, and maps its outcome to an exit code.
func (c *command) execute(ctx context.Context, args []string, s streams) int {
	stderr := s.stderr
	fs := newFlagSet(c.name)
	runCmd := c.setup(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.printHelp(s.stdout, fs)
			return exitOK
		}
		return usageFail(stderr, c.name, usageErrorf("%s (see 'leadership %s --help')", flagError(err), c.name))
	}
	if err := applyEnv(fs, os.LookupEnv); err != nil {
		return usageFail(stderr, c.name, err)
	}
	if err := runCmd(ctx, fs.Args(), s); err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			return usageFail(stderr, c.name, err)
		}
		code := exitFailure
		var xe *exitError
		if errors.As(err, &xe) {
			code = xe.code
			if xe.err == nil {
				return code // the command has said what happened
			}
		}
		fmt.Fprintf(stderr, "leadership: %s: %s\n", c.name, oneLine(err.Error()))
		return code
	}
	return exitOK
}

// exitError ends a command with a specific exit code. With a nil err
// nothing more is printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// oneLine folds a message onto one line, so that every error is one line
// on stderr.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// usageError is a mistake on the command line: it exits with exitUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usageErrorf formats a *usageError.
func usageErrorf(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...)}
}

// usageFail prints err as one line on stderr, prefixed with the command
// name when there is one, and returns exitUsage.
func usageFail(stderr io.Writer, cmd string, err error) int {
	if cmd != "" {
		cmd += ": "
	}
	fmt.Fprintf(stderr, "leadership: %s%s\n", cmd, oneLine(err.Error()))
	return exitUsage
}

// exitStatusHelp documents the exit codes; every help text ends with it
// (followed by the command's own codes).
const exitStatusHelp = `Exit status:
  0  success; follow, proxy, run: also when stopped by SIGINT or SIGTERM,
     even while still retrying a store that does not answer at start
  1  runtime failure (store error, election error, something did not happen in time)
  2  usage error (unknown command or flag, bad flag or environment value, bad store URL)
`

// exitStatusAll lists the codes of every command, for the top-level usage.
const exitStatusAll = exitStatusHelp + `  3  status: the election has no leader
  4  follow, proxy, run, status: the election was ended (leadership end)
  5  status: unconfirmed: a leader is recorded but was not seen renewing its
     lease within its TTL (it has probably crashed), or --no-wait did not
     watch it
  6  run --try: not elected within the time given
  run: when COMMAND ends by itself while leading, its exit status (128+N
  after signal N); 127 when COMMAND cannot be started
`

// printUsage writes the top-level usage text to w.
func printUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString(`leadership elects one leader among many processes on a key/value store.

Usage:
  leadership <command> [flags] [arguments]
  leadership help [command]
  leadership version          (or --version)

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString(`
Run 'leadership <command> --help' for a command's flags. The commands that
join an election take --store URL (memory://NAME, etcd://h:2379, consul://,
zk://, redis://, postgres://...; see docs/cli.md) and --key KEY.

Every flag can also be set by an environment variable named LEADERSHIP_ and
the flag's name in upper case with dashes as underscores (--ttl is
LEADERSHIP_TTL); a flag given on the command line wins over its variable.

`)
	b.WriteString(exitStatusAll)
	_, _ = io.WriteString(w, b.String())
}
