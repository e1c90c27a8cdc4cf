package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

// TestDocsMatchHelp checks that docs/cli.md and the help say the same:
// each command's synopsis in the docs is its usage line, and every flag
// and environment variable of every command is in the docs; both say that
// run, follow and proxy stopped by SIGTERM exit 0, even while retrying.
func TestDocsMatchHelp(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(doc, "| 0 | success; also after SIGINT or SIGTERM (`run`, `follow`, `proxy`), even while they still retry a store") {
		t.Error("docs/cli.md's exit code 0 does not say that SIGTERM while retrying the store is exit 0, as --help does")
	}
	for _, c := range commands() {
		if c.name != "demo" {
			synopsis := "leadership " + c.name + " " + c.args + "\n"
			if !strings.Contains(doc, "```sh\n"+synopsis) {
				t.Errorf("docs/cli.md lacks the synopsis of %s as --help gives it: %q", c.name, synopsis)
			}
		}
		fs := newFlagSet(c.name)
		c.setup(fs)
		if c.name == "run" || c.name == "follow" || c.name == "proxy" {
			var help strings.Builder
			c.printHelp(&help, fs)
			if !strings.Contains(oneLine(help.String()), "0 success; follow, proxy, run: also when stopped by SIGINT or SIGTERM, even while still retrying") {
				t.Errorf("%s --help does not say that SIGTERM is exit 0, even while retrying the store:\n%s", c.name, help.String())
			}
		}
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
