package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/leadership-go/leadership"
)

const endAbout = `
Ends the election at --key for every candidate and follower of it
(leadership.EndElection): each is told the election ended, the leader steps
down at once (leadership run stops its COMMAND and exits with 4), followers
and proxies exit with 4. The record keeps its term counter: a candidate
started later opens the election again, after waiting out the last leader's
TTL, and fencing tokens keep growing.

A key with no election (nothing stored there, as with a mistyped key) is an
error (exit 1) and nothing is written, unless --force is given: then an
ended record is written at the key, which a candidate started later
reopens. A key holding a value that is not an election record is refused
the same way.

Prints the leader the election had and what was done.` + storeAbout

const deleteAbout = `
Ends the election at --key as 'leadership end' does, then deletes the key
(leadership.DeleteElection). The ended record is left in place long enough
for every candidate and follower to see it (3.5s, or the last leader's TTL
if longer), so delete takes that long. Fencing tokens of an election opened
on the key afterwards start again from 1: prefer end where tokens guard a
resource.

A key with no election is an error (exit 1), unless --force is given (then
nothing is left at the key either way).

Prints the leader the election had and what was done.` + storeAbout

// endForceHelp is the usage of --force of end and delete.
const endForceHelp = "act even when the key holds no election (nothing stored, or a value that is not an election record)"

// endCommand describes the end subcommand.
func endCommand() *command {
	return endLikeCommand(command{
		name:    "end",
		summary: "end the election for every candidate and follower",
		about:   endAbout,
	}, false)
}

// deleteCommand describes the delete subcommand.
func deleteCommand() *command {
	return endLikeCommand(command{
		name:    "delete",
		summary: "end the election, then delete its key",
		about:   deleteAbout,
	}, true)
}

// endLikeCommand completes c, end or delete (del): flags --store, --key
// and --force, no arguments.
func endLikeCommand(c command, del bool) *command {
	name := c.name
	c.args = "--store URL --key KEY [--force]"
	c.setup = func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
		var ef electionFlags
		ef.add(fs)
		force := fs.Bool("force", false, endForceHelp)
		return flagsOnly(name, ef.validate, func(ctx context.Context, s streams) error { return runEnd(ctx, ef, *force, del, s) })
	}
	return &c
}

// noElectionError is the outcome of end and delete without --force on a
// key that holds no election.
type noElectionError struct {
	key, what string
}

func (e *noElectionError) Error() string {
	return fmt.Sprintf("no election at key %q (%s): nothing done; check the key, or use --force", e.key, e.what)
}

// runEnd reads the election, ends it (and deletes its key when del) and
// says so. Without force, a key holding no election is an error.
func runEnd(ctx context.Context, ef electionFlags, force, del bool, s streams) error {
	kv, key, st, err := ef.readOnce(ctx, s.stderr)
	if kv == nil {
		return err
	}
	defer kv.Close()
	var fe *foreignValueError
	switch {
	case errors.As(err, &fe) && !force:
		return &noElectionError{key: ef.key, what: "it holds a value that is not an election record"}
	case errors.As(err, &fe):
		st = electionState{missing: true}
	case err != nil:
		return fmt.Errorf("cannot read the election: %w", err)
	case st.missing && !force:
		return &noElectionError{key: ef.key, what: "nothing is stored there"}
	}
	was := "no election"
	switch {
	case st.missing:
	case heldRecord(&st.rec):
		was = fmt.Sprintf("leader was %s, term %d", st.rec.Leader, st.rec.Term)
	case st.rec.Ended:
		was = fmt.Sprintf("already ended, last term %d", st.rec.Term)
	default:
		was = fmt.Sprintf("no leader, last term %d", st.rec.Term)
	}
	if del {
		// DeleteElection waits out the last leader's TTL (at least 3.5s).
		ctx, cancel := context.WithTimeout(ctx, holderTTL(&st.rec)+openTimeout)
		defer cancel()
		if err := leadership.DeleteElection(ctx, kv, key); err != nil {
			return fmt.Errorf("delete the election at key %q: %w", ef.key, err)
		}
		_, err = fmt.Fprintf(s.stdout, "deleted the election at key %q (%s): its candidates and followers have been told to stop\n", ef.key, was)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if err := leadership.EndElection(ctx, kv, key); err != nil {
		return fmt.Errorf("end the election at key %q: %w", ef.key, err)
	}
	_, err = fmt.Fprintf(s.stdout, "ended the election at key %q (%s): its candidates and followers have been told to stop\n", ef.key, was)
	return err
}
