//go:build !leadership_no_zookeeper

package main

// The zookeeper backend, a module of its own: importing its adapter registers
// its schemes (zk zookeeper) with store/open. The tag leadership_no_zookeeper
// leaves it, and its client libraries, out of the command.
import _ "github.com/leadership-go/leadership/store/zookeeper"
