package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/leadership-go/leadership"
)

const followAbout = `
Prints the current leader of the election at --key, then one line for every
change (a new leader, no leader, or a new term of the same leader), until
SIGINT or SIGTERM (exit 0) or until the election is ended (exit 4).

Each line is "TIME LEADER TERM": TIME in RFC 3339 with nanoseconds (when the
change was seen), LEADER the leader's name or "-" when there is none, and
TERM the term (fencing token) of that leader, or the last term when there is
no leader. With --json each line is a JSON object instead:
  {"time":"2025-01-02T15:04:05.123456789Z","leader":"node-1","term":7}
where "leader" is "" when there is none.

A leader that vanished (crashed, partitioned) is reported gone ("-") within
90% of its TTL, before anyone else can take over; a clean release at once.
Store errors are reported on stderr; follow keeps trying.` + storeAbout

// followCommand describes the follow subcommand.
func followCommand() *command {
	return electionCommand(command{
		name:    "follow",
		summary: "print the leader, then every change, one line each",
		about:   followAbout,
		exits:   endedExit,
	}, "print one JSON object per line", runFollow)
}

// runFollow follows the election and prints every observation until ctx
// ends or the election does.
func runFollow(ctx context.Context, ef electionFlags, asJSON bool, s streams) error {
	f, errs, stop, err := ef.follow(ctx, s.stderr)
	if err != nil {
		return err
	}
	defer stop()
	log := &logger{w: s.stderr, prefix: "leadership follow: "}
	enc := json.NewEncoder(s.stdout)
	obs := f.Status()
	for {
		select {
		case <-ctx.Done():
			return nil
		case o, ok := <-obs:
			if !ok {
				<-f.Done()
				if errors.Is(f.Err(), leadership.ErrElectionEnded) {
					return endedError(ef.key)
				}
				return nil
			}
			if asJSON {
				err = enc.Encode(toJSON(o))
			} else {
				_, err = fmt.Fprintln(s.stdout, observationLine(o))
			}
			if err != nil {
				return fmt.Errorf("write: %w", err)
			}
		case err, ok := <-errs:
			errs = log.storeError(errs, err, ok)
		}
	}
}
