//go:build !unix

package main

import (
	"errors"
	"syscall"
)

// hasParentDeathSignal is false: this system has no parent-death signal.
const hasParentDeathSignal = false

// childSysProcAttr is not used: run needs Unix process groups and signals.
func childSysProcAttr() *syscall.SysProcAttr { return nil }

// errNoProcessGroups refuses run on systems without Unix process groups.
var errNoProcessGroups = errors.New("leadership run needs Unix process groups and signals (Linux, or another Unix without the parent-death signal)")

// signalGroup is not supported.
func signalGroup(int, syscall.Signal) error { return errNoProcessGroups }
