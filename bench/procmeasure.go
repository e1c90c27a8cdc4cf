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
// (it lives in one process); there is no idle measurement. With --passes
// N the rounds are split into N passes, each over every row in turn, and
// each row's samples are merged (procpasses.go).
func measureProcs(ctx context.Context, cfg *config) *report {
	rep := &report{Started: time.Now(), Machine: machine(), Command: cfg.command}
	rep.LoadBefore = loadAvg()
	rep.Config = reportConfig{TTL: cfg.ttl.String(), Rounds: cfg.rounds, CrashRounds: cfg.crashRounds,
		Idle: "0s", IdleLongTTL: cfg.idleLongTTL.String(), Holdoff: "none (Stop)", RunID: cfg.runID, Processes: true,
		Passes: cfg.passes}
	rows := newRowSet(rep)
	for pass := range max(cfg.passes, 1) {
		if ctx.Err() != nil {
			break
		}
		pc := *cfg
		pc.rounds, pc.crashRounds = shareOf(cfg.rounds, cfg.passes, pass), shareOf(cfg.crashRounds, cfg.passes, pass)
		if cfg.passes > 1 {
			progress("pass %d of %d: %d handoff and %d crash rounds per row", pass+1, cfg.passes, pc.rounds, pc.crashRounds)
		}
		measureProcPass(ctx, &pc, rows)
	}
	rep.LoadAfter = loadAvg()
	rep.Finished = time.Now()
	evaluate(cfg, rep)
	return rep
}

// measureProcPass measures every row once, with cfg's rounds, into rows.
func measureProcPass(ctx context.Context, cfg *config, rows *rowSet) {
	for _, be := range cfg.backends {
		if ctx.Err() != nil {
			break
		}
		if be.scheme == "memory" {
			rows.skip(be.name, "skip "+be.name+": memory:// lives in one process")
			continue
		}
		if rows.skipped[be.name] {
			continue
		}
		if err := probe(ctx, be); err != nil {
			rows.skip(be.name, fmt.Sprintf("skip %s (%s): %v", be.name, maskURL(be.url), err))
			if be == cfg.election {
				cfg.election = nil
				rows.skip(electionName, "skip "+electionName+": etcd did not open")
			}
			continue
		}
		rows.add(measureProcBackend(ctx, cfg, be))
		if be == cfg.election {
			measureProcElection(ctx, cfg, rows)
			cfg.election = nil
		}
	}
	if cfg.election != nil && !rows.skipped[electionName] {
		if err := probe(ctx, cfg.election); err != nil {
			rows.skip(electionName, fmt.Sprintf("skip %s (%s): %v", electionName, maskURL(cfg.election.url), err))
		} else {
			measureProcElection(ctx, cfg, rows)
		}
	}
}

// measureProcBackend measures the library's row of be.
func measureProcBackend(ctx context.Context, cfg *config, be *backend) *backendResult {
	name := be.name
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
func measureProcElection(ctx context.Context, cfg *config, rows *rowSet) {
	if ctx.Err() != nil {
		return
	}
	r := &backendResult{Name: "etcd concurrency.Election", URL: maskURL(cfg.election.url), Kind: "etcd-election"}
	defer rows.add(r)
	progress("%s: cross-process handoff %d rounds, crash %d rounds", electionName, cfg.rounds, cfg.crashRounds)
	res, ph, err := procElection(ctx, cfg.election, cfg)
	r.Election, r.Phases = res, ph
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		progress("%s: error: %v", electionName, err)
	}
}
