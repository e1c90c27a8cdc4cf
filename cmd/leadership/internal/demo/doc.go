// Package demo is the "leadership demo" command: a small election run
// inside one process on the embedded store (store/memory), narrated as it
// happens.
//
// Every candidate (node-1 .. node-N) and one follower has a store handle of
// its own, as separate processes would. Each candidate serves "hello from
// node-i" over HTTP on 127.0.0.1 and is named by that address in the
// election; a proxy supplied by the caller (the proxy command's handler)
// forwards requests to whoever leads. The demo runs four phases (see
// phases.go): a first election, a resign handoff, a leader that vanishes
// and is taken over, and a stop with a summary of the measured times.
//
// The files, one concern each:
//
//	config.go     Config, its defaults and limits, Validate
//	errors.go     the typed errors
//	demo.go       Run; starting and stopping candidates, follower and servers
//	recorder.go   the timestamped event log every goroutine writes to
//	servers.go    the candidates' HTTP servers and the proxy's server
//	requests.go   requests through the proxy
//	phases.go     the four phases
//	narration.go  what is printed: events, durations, the summary
package demo
