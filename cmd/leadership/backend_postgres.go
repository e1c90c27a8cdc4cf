//go:build !leadership_no_postgres

package main

// The postgres backend, a module of its own: importing its adapter registers
// its schemes (postgres postgresql) with store/open. The tag leadership_no_postgres
// leaves it, and its client libraries, out of the command.
import _ "github.com/leadership-go/leadership/store/postgres"
