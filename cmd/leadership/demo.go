package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/cmd/leadership/internal/demo"
)

// demoAbout is the demo's help text: what it runs, phase by phase.
const demoAbout = `
Runs a small election inside this process, on the embedded in-memory store,
and narrates it. Every candidate (node-1 .. node-N) and one follower has its
own store client, as separate processes would. Each candidate also serves
"hello from node-i" over HTTP on 127.0.0.1, and its address is its name in
the election; a leadership proxy (the proxy command's code, reading the
follower) forwards requests to whoever leads. Times are offsets from the
start of the demo; durations are measured, not computed.

Phases:
  1. First election: which node wins and how fast, every candidate's
     IsLeader, and when the follower names the leader; a few requests
     through the proxy show the leader answering.
  2. Resign: the leader calls Resign(). Shows the time from the call to the
     next leader's elected=true, its fencing token (greater than the last
     one), when the follower names it, and requests now answered by it.
  3. A leader vanishes: the leader's store client and HTTP server are
     closed, as if its process were killed (its candidate is not stopped).
     The dead leader steps down at its own deadline, before the store lets
     anyone else take over one TTL after its last renewal. Shows the
     step-down, the follower reporting no leader then the successor, what
     requests through the proxy get meanwhile (held by the proxy while the
     dead leader is still named, for up to 5s, then 503; 503 while there
     is none; then the successor's answer),
     the takeover time relative to the vanish and to the TTL, and checks
     that there was at most one leader at any instant.
  4. Stop: every candidate and the follower are stopped, then a summary
     table of the measured times is printed.

The demo takes about one TTL plus a moment. If an expected event does not
happen within 10 x TTL + 10s, it says what is missing and exits with 1.`

// demoCommand describes the demo subcommand: its flags, read into a
// demo.Config; the demo itself is package internal/demo.
func demoCommand() *command {
	return &command{
		name:    "demo",
		args:    "[--candidates N] [--ttl DURATION] [--key KEY]",
		summary: "watch an election on the embedded store: first leader, resign, vanished leader",
		about:   demoAbout,
		setup: func(fs *flag.FlagSet) func(context.Context, []string, streams) error {
			var cfg demo.Config
			fs.IntVar(&cfg.Candidates, "candidates", demo.DefaultCandidates,
				fmt.Sprintf("run `N` candidates, %d to %d", demo.MinCandidates, demo.MaxCandidates))
			durationFlag(fs, &cfg.TTL, "ttl", demo.DefaultTTL,
				fmt.Sprintf("lease TTL of every candidate, a `DURATION` from %s to %s",
					demo.ShortDuration(demo.MinTTL), demo.ShortDuration(demo.MaxTTL)))
			fs.StringVar(&cfg.Key, "key", demo.DefaultKey, "election `KEY` in the store")
			return func(ctx context.Context, args []string, s streams) error {
				if err := noArgs("demo", args); err != nil {
					return err
				}
				cfg.NewProxy = func(current func() leadership.Status) demo.Proxy {
					return newLeaderProxy(current, cfg.Key, proxyDefaultHealthPath, proxyDefaultHold, &logger{w: io.Discard})
				}
				err := demo.Run(ctx, cfg, s.stdout)
				var ce *demo.ConfigError
				if errors.As(err, &ce) {
					return usageErrorf("--%v", err)
				}
				return err
			}
		},
	}
}
