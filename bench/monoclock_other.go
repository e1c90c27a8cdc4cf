//go:build !linux

package main

import (
	"os/exec"
	"time"
)

// procsSupported says whether --processes can run here: only on linux,
// where CLOCK_MONOTONIC is shared by every process and Pdeathsig exists.
const procsSupported = false

var monoStart = time.Now()

// monoNow is this process's own monotonic clock: it does not compare
// across processes, and --processes is refused on this system.
func monoNow() int64 { return int64(time.Since(monoStart)) }

func dieWithParent(*exec.Cmd) {}
