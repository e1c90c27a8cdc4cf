package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// modulePrefix is the path of the root module; every module of the
// repository has a path below it.
const modulePrefix = "github.com/leadership-go/leadership"

// unreleased are the modules of the repository that no release publishes,
// by directory: the benchmark program and the tools that build the test
// servers and the releases. Every other go.mod is a module of the release
// set.
var unreleased = []string{"bench", "tools/consul", "tools/kube-apiserver", "tools/release"}

// module is one go.mod of the repository.
type module struct {
	dir  string // relative to the repository root, "." for the root
	path string // the module path
	file *modfile.File
}

// released reports whether a release publishes m.
func (m module) released() bool { return !slices.Contains(unreleased, m.dir) }

// tag is m's git tag for version: the version itself for the root
// module, DIR/version for a nested one (the go command's convention).
func (m module) tag(version string) string {
	if m.dir == "." {
		return version
	}
	return m.dir + "/" + version
}

// findModules reads every go.mod below root (none under testdata or a
// hidden directory), in directory order.
func findModules(root string) ([]module, error) {
	var out []module
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := modfile.Parse(p, data, nil)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		out = append(out, module{dir: filepath.ToSlash(dir), path: f.Module.Mod.Path, file: f})
		return nil
	})
	return out, err
}

// checkSet reports every reason the modules under root cannot be released
// together at version: a version that is not semantic, a module whose path
// does not match its directory, a replace directive in a released module,
// a require of a module of the repository at another version or of one
// the release leaves out, a require of a module of this repository that
// does not exist. It returns nil for a consistent set.
func checkSet(root, version string) ([]string, error) {
	mods, err := findModules(root)
	if err != nil {
		return nil, err
	}
	var problems []string
	if !semver.IsValid(version) || semver.Canonical(version) != version || semver.Build(version) != "" {
		problems = append(problems, fmt.Sprintf("%q is not a canonical semantic version such as v0.1.0", version))
	}
	byPath := map[string]module{}
	for _, m := range mods {
		want := modulePrefix
		if m.dir != "." {
			want += "/" + m.dir
		}
		if m.path != want {
			problems = append(problems, fmt.Sprintf("%s/go.mod: module %s, want %s (its directory)", m.dir, m.path, want))
		}
		byPath[m.path] = m
	}
	for _, m := range mods {
		if !m.released() {
			continue
		}
		for _, r := range m.file.Replace {
			problems = append(problems, fmt.Sprintf("%s/go.mod: replace %s: a user's build ignores it; require a published version", m.dir, r.Old.Path))
		}
		for _, x := range m.file.Exclude {
			problems = append(problems, fmt.Sprintf("%s/go.mod: exclude %s: a user's build ignores it", m.dir, x.Mod.Path))
		}
		for _, r := range m.file.Require {
			p := r.Mod.Path
			if p != modulePrefix && !strings.HasPrefix(p, modulePrefix+"/") {
				continue
			}
			dep, ok := byPath[p]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s/go.mod: requires %s, which is no module of the repository", m.dir, p))
			case !dep.released():
				problems = append(problems, fmt.Sprintf("%s/go.mod: requires %s, which the release leaves out", m.dir, p))
			case r.Mod.Version != version:
				problems = append(problems, fmt.Sprintf("%s/go.mod: requires %s %s, not the release's %s", m.dir, p, r.Mod.Version, version))
			}
		}
	}
	return append(problems, checkWork(root, version, mods)...), nil
}

// checkWork reports where go.work, if root has one, would not build the
// tree's modules against each other at version: a module it does not
// use, a replace of a sibling at another version.
func checkWork(root, version string, mods []module) []string {
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil
	}
	w, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return []string{"go.work: " + err.Error()}
	}
	var problems []string
	used := map[string]bool{}
	for _, u := range w.Use {
		used[filepath.ToSlash(filepath.Clean(u.Path))] = true
	}
	for _, m := range mods {
		if m.released() && !used[m.dir] {
			problems = append(problems, fmt.Sprintf("go.work: does not use %s", m.dir))
		}
	}
	for _, r := range w.Replace {
		if strings.HasPrefix(r.Old.Path+"/", modulePrefix+"/") && r.Old.Version != version {
			problems = append(problems, fmt.Sprintf("go.work: replaces %s %s, not the release's %s", r.Old.Path, r.Old.Version, version))
		}
	}
	return problems
}
