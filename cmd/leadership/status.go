package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/leadership-go/leadership"
)

const statusAbout = `
Reads the election at --key once and prints its leader as follow does:
"TIME LEADER TERM" ("-" for no leader; TERM is the fencing token, or the
last term when there is no leader), or with --json
  {"time":"2025-01-02T15:04:05.123456789Z","leader":"node-1","term":7}
It exits with 0 when there is a leader and 3 when there is none, so that
scripts can test it.

A leader that crashed less than one TTL ago may still be shown: only a
follower that watches for a while (leadership follow) can tell that its
lease is no longer renewed.` + storeAbout

// statusCommand describes the status subcommand.
func statusCommand() *command {
	return &command{
		name:    "status",
		args:    "--store URL --key KEY [--json]",
		summary: "print the current leader and term once (exit 3: no leader)",
		about:   statusAbout,
		exits:   "  3  the election has no leader\n",
		setup: func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
			var ef electionFlags
			ef.add(fs)
			asJSON := fs.Bool("json", false, "print a JSON object")
			return func(ctx context.Context, args []string, s streams) error {
				if err := noArgs("status", args); err != nil {
					return err
				}
				if err := ef.validate(); err != nil {
					return err
				}
				return runStatus(ctx, ef, *asJSON, s)
			}
		},
	}
}

// runStatus reads the election with a follower started and stopped at
// once, prints what it saw, and exits with 3 when there is no leader.
func runStatus(ctx context.Context, ef electionFlags, asJSON bool, s streams) error {
	kv, err := ef.open(ctx)
	if err != nil {
		return err
	}
	defer kv.Close()
	f := leadership.NewFollower(kv, ef.key)
	if _, _, err := f.FollowElectionContext(ctx); err != nil {
		return startError(err)
	}
	o := f.Current()
	f.Stop()
	if asJSON {
		err = json.NewEncoder(s.stdout).Encode(toJSON(o))
	} else {
		_, err = fmt.Fprintln(s.stdout, observationLine(o))
	}
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if o.Leader == "" {
		return &exitError{code: exitNoLeader}
	}
	return nil
}
