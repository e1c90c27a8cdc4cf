package main

import (
	"context"
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

Prints the leader the election had and what was done.` + storeAbout

// endCommand describes the end subcommand.
func endCommand() *command {
	return electionCommand(command{
		name:    "end",
		summary: "end the election for every candidate and follower",
		about:   endAbout,
	}, "", func(ctx context.Context, ef electionFlags, _ bool, s streams) error { return runEnd(ctx, ef, s) })
}

// runEnd reads who leads, ends the election and says so.
func runEnd(ctx context.Context, ef electionFlags, s streams) error {
	kv, err := ef.open(ctx)
	if err != nil {
		return err
	}
	defer kv.Close()
	f := leadership.NewFollower(kv, ef.key)
	if _, _, err := f.FollowElectionContext(ctx); err != nil {
		return startError(err)
	}
	before := f.Current()
	f.Stop()
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if err := leadership.EndElection(ctx, kv, ef.key); err != nil {
		return fmt.Errorf("end the election at key %q: %w", ef.key, err)
	}
	was := fmt.Sprintf("no leader, last term %d", before.Term)
	if before.Leader != "" {
		was = fmt.Sprintf("leader was %s, term %d", before.Leader, before.Term)
	}
	_, err = fmt.Fprintf(s.stdout, "ended the election at key %q (%s): its candidates and followers have been told to stop\n", ef.key, was)
	return err
}
