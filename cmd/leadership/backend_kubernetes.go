//go:build !leadership_no_kubernetes

package main

// The kubernetes backend, a module of its own: importing its adapter registers
// its schemes (k8s) with store/open. The tag leadership_no_kubernetes
// leaves it, and its client libraries, out of the command.
import _ "github.com/leadership-go/leadership/store/kubernetes"
