//go:build linux

package main

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// procsSupported says whether --processes can run here: it needs a clock
// every process shares and children that die with their parent.
const procsSupported = true

// monoNow reads CLOCK_MONOTONIC, which every process of this machine
// shares, in nanoseconds. Go's own monotonic reading is relative to each
// process's start, so it cannot compare stamps of two processes.
func monoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// dieWithParent makes the child get SIGKILL when the parent dies.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
