//go:build !leadership_no_etcd

package main

// The etcd backend, a module of its own: importing its adapter registers
// its schemes (etcd) with store/open. The tag leadership_no_etcd
// leaves it, and its client libraries, out of the command.
import _ "github.com/leadership-go/leadership/store/etcd"
