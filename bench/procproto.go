package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// The cross-process protocol. A child writes one line per event on its
// stdout:
//
//	<kind> <node> <token> <monotonic ns> <quoted argument>
//
// for instance `elected c2 17 81234567890123 "true"`. The parent writes
// one command per line on the child's stdin; the child ends when its stdin
// closes.

// Event kinds a child reports.
const (
	pkReady    = "ready"    // the child opened its client and started its role
	pkElected  = "elected"  // the elected channel delivered arg ("true"/"false"); etcd: Campaign returned
	pkStepDown = "stepdown" // the context of term token ended
	pkLeader   = "leader"   // a follower (etcd: an observer) names arg
	pkRelease  = "release"  // stamped right before Stop (etcd: Resign) is called
	pkReleased = "released" // etcd: Resign returned
	pkStopped  = "stopped"  // Stop returned (etcd: the session closed)
	pkCall     = "call"     // a store call began (arg "Method>") or returned (arg "Method<")
	pkWatch    = "watch"    // a store watch delivered an event (arg: the key's value, cut short)
	pkError    = "error"    // a store error on the error channel, or a fatal one
)

// Commands the parent sends.
const (
	cmdStop = "stop" // step down and hand over (Stop; etcd: Resign), then wait for cmdExit
	// cmdExit closes the client (etcd: the session, then the client) and
	// exits. It is sent once the round is measured, so that the old
	// process's teardown (its connections closed, the server's work for
	// them) is part of the untimed replacement, not of the handoff.
	cmdExit = "exit"
)

// procEvent is one parsed line of a child.
type procEvent struct {
	Kind  string
	Node  string
	Token uint64
	At    int64 // CLOCK_MONOTONIC, ns
	Arg   string
}

// String formats the event as its protocol line, without the newline.
func (e procEvent) String() string {
	node := e.Node
	if node == "" || strings.ContainsAny(node, " \t\n") {
		node = "-"
	}
	return fmt.Sprintf("%s %s %d %d %s", e.Kind, node, e.Token, e.At, strconv.Quote(e.Arg))
}

// parseProcEvent parses one protocol line.
func parseProcEvent(line string) (procEvent, error) {
	line = strings.TrimRight(line, "\r\n")
	f := strings.SplitN(line, " ", 5)
	if len(f) != 5 {
		return procEvent{}, fmt.Errorf("event line %q: want 5 fields", line)
	}
	e := procEvent{Kind: f[0], Node: f[1]}
	if e.Kind == "" {
		return procEvent{}, fmt.Errorf("event line %q: no kind", line)
	}
	var err error
	if e.Token, err = strconv.ParseUint(f[2], 10, 64); err != nil {
		return procEvent{}, fmt.Errorf("event line %q: token: %w", line, err)
	}
	if e.At, err = strconv.ParseInt(f[3], 10, 64); err != nil {
		return procEvent{}, fmt.Errorf("event line %q: time: %w", line, err)
	}
	if e.Arg, err = strconv.Unquote(f[4]); err != nil {
		return procEvent{}, fmt.Errorf("event line %q: argument: %w", line, err)
	}
	return e, nil
}

// eventWriter writes a child's event lines, one write per line, from any
// goroutine.
type eventWriter struct {
	mu   sync.Mutex
	w    io.Writer
	node string
	err  error
}

// emit stamps nothing itself: at is taken by the caller right after what
// it reports.
func (w *eventWriter) emit(kind string, token uint64, at int64, arg string) {
	line := procEvent{Kind: kind, Node: w.node, Token: token, At: at, Arg: arg}.String() + "\n"
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		_, w.err = io.WriteString(w.w, line)
	}
}
