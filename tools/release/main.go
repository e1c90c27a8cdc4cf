// Command release checks, publishes and tags the repository's modules as
// one release, and guards their API. Run it from the repository root
// (go -C tools/release run . -root ../.. ...):
//
//	release check [-version V]      refuse an inconsistent set (exit 1): a replace directive,
//	                                a require of a sibling at another version or left out
//	release tag [-version V]        check the set and the API, then tag every released module
//	                                at V (git tag, not pushed); none if any of the tags exists
//	release proxy -out DIR [-version V]
//	                                publish every released module at V into DIR, a file-system
//	                                module proxy (GOPROXY=file://DIR)
//	release api [-version V]        compare the API with api/ (apidiff): exit 1 on an
//	                                incompatible change that V does not allow (none, for the
//	                                root module's internal packages, which other modules import);
//	                                a package removed, or moved to another module, is one
//	release api -write [-version V] make the tree's API the baseline, at V
//
// V defaults to the VERSION file at the root: the version the tree will
// be released as, which every module's require of a sibling names.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run is the command with its arguments; it returns the exit code.
func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: release check|tag|proxy|api [flags]")
		return 2
	}
	fs := flag.NewFlagSet("release "+args[0], flag.ContinueOnError)
	root := fs.String("root", ".", "the repository root")
	version := fs.String("version", "", "the release's version (default: the VERSION file)")
	out := fs.String("out", "", "proxy: the directory to publish into")
	write := fs.Bool("write", false, "api: write the baseline instead of checking it")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *version == "" {
		v, err := os.ReadFile(filepath.Join(*root, "VERSION"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "release:", err)
			return 2
		}
		*version = strings.TrimSpace(string(v))
	}
	switch args[0] {
	case "check":
		return check(*root, *version)
	case "tag":
		if code := check(*root, *version); code != 0 {
			return code
		}
		if code := api(*root, *version, false); code != 0 {
			return code
		}
		return tag(*root, *version)
	case "proxy":
		if *out == "" {
			fmt.Fprintln(os.Stderr, "release proxy: -out DIR is required")
			return 2
		}
		if code := check(*root, *version); code != 0 {
			return code
		}
		if err := writeProxy(*root, *version, *out); err != nil {
			fmt.Fprintln(os.Stderr, "release proxy:", err)
			return 1
		}
		return 0
	case "api":
		return api(*root, *version, *write)
	}
	fmt.Fprintf(os.Stderr, "release: unknown command %q\n", args[0])
	return 2
}

// check prints every problem of the set and returns 1 if there is one.
func check(root, version string) int {
	problems, err := checkSet(root, version)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release check:", err)
		return 1
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "release check:", p)
	}
	if len(problems) > 0 {
		return 1
	}
	return 0
}

// tag tags every released module at version, refusing a dirty tree.
func tag(root, version string) int {
	if out, err := exec.Command("git", "-C", root, "status", "--porcelain").Output(); err != nil || len(out) > 0 {
		fmt.Fprintln(os.Stderr, "release tag: the work tree is not clean (or not a git tree); commit first")
		return 1
	}
	mods, err := findModules(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release tag:", err)
		return 1
	}
	// Every tag is checked before any is made: a set half tagged cannot
	// be resumed.
	for _, m := range mods {
		if m.released() && exec.Command("git", "-C", root, "rev-parse", "-q", "--verify", "refs/tags/"+m.tag(version)).Run() == nil {
			fmt.Fprintf(os.Stderr, "release tag: %s exists already; no tag made\n", m.tag(version))
			return 1
		}
	}
	for _, m := range mods {
		if !m.released() {
			continue
		}
		t := m.tag(version)
		if out, err := exec.Command("git", "-C", root, "tag", "-a", t, "-m", m.path+" "+version).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "release tag: %s: %v\n%s", t, err, out)
			return 1
		}
		fmt.Println(t)
	}
	return 0
}

// api checks the API against the baseline, or writes it.
func api(root, version string, write bool) int {
	if write {
		if err := writeAPI(root, version); err != nil {
			fmt.Fprintln(os.Stderr, "release api:", err)
			return 1
		}
		return 0
	}
	r, err := checkAPI(root, version)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release api:", err)
		return 1
	}
	for _, n := range r.notes {
		fmt.Fprintln(os.Stderr, "release api: note:", n)
	}
	for _, c := range r.compatible {
		fmt.Println("compatible:", c)
	}
	for _, c := range r.incompatible {
		fmt.Println("INCOMPATIBLE:", c)
	}
	switch {
	case len(r.incompatible) == 0:
		return 0
	case r.allowed:
		fmt.Printf("release api: %d incompatible changes, which %s allows\n", len(r.incompatible), version)
		return 0
	}
	fmt.Fprintf(os.Stderr, "release api: %d incompatible changes, which %s does not allow: raise the version (VERSION) or keep the API and the packages' modules (api/BASELINE, api/PACKAGES)\n", len(r.incompatible), version)
	return 1
}
