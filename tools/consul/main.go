// Command consul is HashiCorp Consul's CLI, built from the published
// github.com/hashicorp/consul module so that the leadership test scripts can
// run a real Consul agent on machines where Consul is not packaged.
//
// It mirrors main.go of github.com/hashicorp/consul v1.20.6 (BUSL-1.1).
// Build it with scripts/servers.sh install consul; it is a separate module
// and is not part of the leadership library.
package main

import (
	"fmt"
	"io"
	"log"
	"os"

	"github.com/hashicorp/consul/command"
	"github.com/hashicorp/consul/command/cli"
	"github.com/hashicorp/consul/command/version"
	mcli "github.com/mitchellh/cli"
)

func main() {
	os.Exit(realMain())
}

func realMain() int {
	log.SetOutput(io.Discard)

	ui := &cli.BasicUI{
		BasicUi: mcli.BasicUi{Writer: os.Stdout, ErrorWriter: os.Stderr},
	}
	cmds := command.RegisteredCommands(ui)
	names := make([]string, 0, len(cmds))
	for c := range cmds {
		names = append(names, c)
	}

	c := &mcli.CLI{
		Args:         os.Args[1:],
		Commands:     cmds,
		Autocomplete: true,
		Name:         "consul",
		HelpFunc:     mcli.FilteredHelpFunc(names, mcli.BasicHelpFunc("consul")),
		HelpWriter:   os.Stdout,
		ErrorWriter:  os.Stderr,
	}

	if c.IsVersion() {
		return version.New(ui).Run(nil)
	}

	exitCode, err := c.Run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error executing CLI: %v\n", err)
		return 1
	}
	return exitCode
}
