//go:build !leadership_no_consul

package main

// The consul backend, a module of its own: importing its adapter registers
// its schemes (consul) with store/open. The tag leadership_no_consul
// leaves it, and its client libraries, out of the command.
import _ "github.com/leadership-go/leadership/store/consul"
