//go:build unix && !linux

package main

import "syscall"

// hasParentDeathSignal is false: this system has no parent-death signal,
// so a child outlives a run that is killed with SIGKILL.
const hasParentDeathSignal = false

// childSysProcAttr starts the child in a process group of its own (its
// pid), so that stopping it also reaches what it started.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
