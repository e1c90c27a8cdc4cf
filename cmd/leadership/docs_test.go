package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// TestDocsMatchHelp checks that docs/cli.md and the help say the same:
// each command's synopsis in the docs is its usage line, and every flag
// and environment variable of every command is in the docs.
func TestDocsMatchHelp(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range commands() {
		if c.name != "demo" {
			synopsis := "leadership " + c.name + " " + c.args + "\n"
			if !strings.Contains(doc, "```sh\n"+synopsis) {
				t.Errorf("docs/cli.md lacks the synopsis of %s as --help gives it: %q", c.name, synopsis)
			}
		}
		fs := newFlagSet(c.name)
		c.setup(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(doc, "--"+f.Name) {
				t.Errorf("docs/cli.md does not mention --%s of %s", f.Name, c.name)
			}
			if !strings.Contains(doc, envName(f.Name)) {
				t.Errorf("docs/cli.md does not list %s (--%s of %s)", envName(f.Name), f.Name, c.name)
			}
		})
	}
}
