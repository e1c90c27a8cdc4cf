package main

import "syscall"

// hasParentDeathSignal reports whether the child is killed by the kernel
// when run dies (see childSysProcAttr).
const hasParentDeathSignal = true

// childSysProcAttr starts the child in a process group of its own (its
// pid), so that stopping it also reaches what it started, and with the
// parent-death signal SIGKILL, so that the kernel kills it if run dies,
// even by SIGKILL. Linux sends that signal when the thread that forked the
// child exits, not the process: see runner.start for how the thread is
// kept.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
