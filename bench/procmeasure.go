package main

import (
	"context"
	"fmt"
	"time"
)

// measureProcs is the cross-process mode (--processes): every candidate,
// follower and etcd Election participant is a child process of this
// program, with its own client; the children stamp their events with
// CLOCK_MONOTONIC, which they share with the parent. memory:// is left out
// (it lives in one process); there is no idle measurement.
func measureProcs(ctx context.Context, cfg *config) *report {
	rep := &report{Started: time.Now(), Machine: machine(), Command: cfg.command}
	rep.LoadBefore = loadAvg()
	rep.Config = reportConfig{TTL: cfg.ttl.String(), Rounds: cfg.rounds, CrashRounds: cfg.crashRounds,
		Idle: "0s", IdleLongTTL: cfg.idleLongTTL.String(), Holdoff: "none (Stop)", RunID: cfg.runID, Processes: true}
	skip := func(line string) {
		progress("%s", line)
		rep.Skipped = append(rep.Skipped, line)
	}
	for _, be := range cfg.backends {
		if ctx.Err() != nil {
			break
		}
		if be.scheme == "memory" {
			skip("skip " + be.name + ": memory:// lives in one process")
			continue
		}
		if err := probe(ctx, be); err != nil {
			skip(fmt.Sprintf("skip %s (%s): %v", be.name, maskURL(be.url), err))
			if be == cfg.election {
				cfg.election = nil
				skip("skip " + electionName + ": etcd did not open")
			}
			continue
		}
		rep.Backends = append(rep.Backends, measureProcBackend(ctx, cfg, be, be.name))
		if cfg.standby && ctx.Err() == nil {
			sb := *cfg
			sb.withStandby = true
			rep.Backends = append(rep.Backends, measureProcBackend(ctx, &sb, be, be.name+"+standby"))
		}
		if be == cfg.election {
			measureProcElection(ctx, cfg, rep)
			cfg.election = nil
		}
	}
	if cfg.election != nil {
		if err := probe(ctx, cfg.election); err != nil {
			skip(fmt.Sprintf("skip %s (%s): %v", electionName, maskURL(cfg.election.url), err))
		} else {
			measureProcElection(ctx, cfg, rep)
		}
	}
	rep.LoadAfter = loadAvg()
	rep.Finished = time.Now()
	evaluate(cfg, rep)
	return rep
}

// measureProcBackend measures one library row, named name, on be.
func measureProcBackend(ctx context.Context, cfg *config, be *backend, name string) *backendResult {
	r := &backendResult{Name: name, URL: maskURL(be.url), Kind: "library"}
	progress("%s: cross-process handoff, %d rounds", name, cfg.rounds)
	h, ph, err := procHandoff(ctx, be, cfg)
	r.Handoff, r.Phases = h, ph
	r.fail("handoff", err)
	if cfg.crashRounds > 0 && ctx.Err() == nil {
		progress("%s: cross-process crash takeover (SIGKILL), %d rounds", name, cfg.crashRounds)
		c, err := procCrash(ctx, be, cfg)
		r.Crash = c
		r.fail("crash", err)
	}
	return r
}

// measureProcElection adds the row of etcd's concurrency.Election, measured
// in child processes.
func measureProcElection(ctx context.Context, cfg *config, rep *report) {
	if ctx.Err() != nil {
		return
	}
	r := &backendResult{Name: "etcd concurrency.Election", URL: maskURL(cfg.election.url), Kind: "etcd-election"}
	rep.Backends = append(rep.Backends, r)
	progress("%s: cross-process handoff %d rounds, crash %d rounds", electionName, cfg.rounds, cfg.crashRounds)
	res, ph, err := procElection(ctx, cfg.election, cfg)
	r.Election, r.Phases = res, ph
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		progress("%s: error: %v", electionName, err)
	}
}
