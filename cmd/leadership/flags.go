package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// envPrefix starts the name of every environment variable that sets a flag.
const envPrefix = "LEADERSHIP_"

// newFlagSet returns a flag set for the subcommand name that reports errors
// to its caller instead of printing them or exiting.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("leadership "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// envName is the environment variable that sets the flag called name:
// LEADERSHIP_ and the name in upper case, dashes turned into underscores.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyEnv sets every flag of fs that the command line did not set from its
// environment variable, read with lookup (os.LookupEnv in the program).
// Unset and empty variables are ignored. A value the flag refuses is a
// *usageError naming the variable.
func applyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	onCommandLine := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || onCommandLine[f.Name] {
			return
		}
		v, ok := lookup(envName(f.Name))
		if !ok || v == "" {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				err = usageErrorf("invalid value %q in environment variable %s (for --%s): want true or false (also 1, 0, t, f, TRUE, FALSE)", v, envName(f.Name), f.Name)
				return
			}
			err = usageErrorf("invalid value %q in environment variable %s (for --%s): %v", v, envName(f.Name), f.Name, e)
		}
	})
	return err
}

// flagError rewrites an error of the flag package to name flags with two
// dashes, as the help texts do.
func flagError(err error) string {
	return strings.NewReplacer(
		"for flag -", "for flag --",
		"not defined: -", "not defined: --",
		"needs an argument: -", "needs an argument: --",
	).Replace(err.Error())
}

// printHelp writes the command's help to w: synopsis, description, every
// flag with its default and environment variable, and the exit codes.
func (c *command) printHelp(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: leadership %s %s\n\n%s\n", c.name, c.args, strings.TrimSpace(c.about))
	type row struct{ left, usage, env string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		metavar, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if metavar != "" {
			left += " " + metavar
		}
		switch {
		case f.DefValue == "" || f.DefValue == "0" || f.DefValue == "0s" || f.DefValue == "false":
		case fmt.Sprintf("%T", f.Value) == "*flag.stringValue": // as flag.PrintDefaults quotes them
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		default:
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		rows = append(rows, row{left, usage, envName(f.Name)})
		width = max(width, len(left))
	})
	if len(rows) > 0 {
		b.WriteString("\nFlags (each can also be set by the environment variable shown; the\ncommand line wins):\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "  %-*s  %s\n  %-*s  [$%s]\n", width, r.left, r.usage, width, "", r.env)
		}
	}
	b.WriteString("\n" + exitStatusHelp)
	if c.exits != "" {
		b.WriteString(c.exits)
	}
	_, _ = io.WriteString(w, b.String())
}
