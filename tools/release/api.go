package main

import (
	"bufio"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/mod/semver"
	"golang.org/x/tools/go/gcexportdata"
	"golang.org/x/tools/go/packages"
)

// The API promise: api/ holds, for every package of every released
// module (internal packages too: the adapters' modules import the root
// module's, so they are an API between modules of different versions),
// its exported API as compiler export data, taken at the version in
// api/BASELINE, and in api/PACKAGES the module that holds it. checkAPI
// compares the tree with it by golang.org/x/exp/apidiff: an incompatible
// change is refused unless the version the tree will be released as
// (VERSION) says so: a new major version, or from v0 a new minor one. A
// package that leaves its module (moved to another one, or to none
// released) is an incompatible change too: a user's build requiring the
// old module at the new version would lose it, or find it twice.
//
// api/PACKAGES has one line per package, sorted: its import path, a
// space, and the path of the module that holds it:
//
//	github.com/leadership-go/leadership/store/etcd github.com/leadership-go/leadership/store/etcd
//
// A line with the import path alone (a baseline written before modules
// were recorded) leaves that package's module unchecked, which the check
// says; api -write records it.

// apiDir is the baseline's directory, below the repository root.
const apiDir = "api"

// apiPackage is one package's API and the module that holds it ("" when
// a baseline does not say).
type apiPackage struct {
	types  *types.Package
	module string
}

// loadPackages type-checks every non-main package of the released modules
// under root, keyed by import path.
func loadPackages(root string) (map[string]apiPackage, error) {
	mods, err := findModules(root)
	if err != nil {
		return nil, err
	}
	out := map[string]apiPackage{}
	for _, m := range mods {
		if !m.released() {
			continue
		}
		// ./... stops at a nested module: every package loaded is m's.
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedFiles, Dir: filepath.Join(root, m.dir)}
		pkgs, err := packages.Load(cfg, "./...")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.dir, err)
		}
		for _, p := range pkgs {
			if len(p.Errors) > 0 {
				return nil, fmt.Errorf("%s: %v", p.PkgPath, p.Errors[0])
			}
			if p.Name == "main" || p.Types == nil {
				continue
			}
			// A nested module's internal packages are its own: no other
			// module can import them.
			if m.dir != "." && strings.Contains(strings.TrimPrefix(p.PkgPath, m.path), "/internal") {
				continue
			}
			out[p.PkgPath] = apiPackage{types: p.Types, module: m.path}
		}
	}
	return out, nil
}

// exportFile is the baseline file of the package path.
func exportFile(root, path string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, modulePrefix), "/")
	if rel == "" {
		rel = "leadership"
	}
	return filepath.Join(root, apiDir, strings.ReplaceAll(rel, "/", "_")+".export")
}

// writeAPI replaces the baseline with the tree's API, at version.
func writeAPI(root, version string) error {
	pkgs, err := loadPackages(root)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(root, apiDir)); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, apiDir), 0o755); err != nil {
		return err
	}
	var index []string
	for path, p := range pkgs {
		f, err := os.Create(exportFile(root, path))
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		if err := gcexportdata.Write(w, token.NewFileSet(), p.types); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		index = append(index, path+" "+p.module)
	}
	slices.Sort(index)
	if err := os.WriteFile(filepath.Join(root, apiDir, "PACKAGES"), []byte(strings.Join(index, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, apiDir, "BASELINE"), []byte(version+"\n"), 0o644)
}

// readBaseline returns the baseline's version and packages.
func readBaseline(root string) (string, map[string]apiPackage, error) {
	v, err := os.ReadFile(filepath.Join(root, apiDir, "BASELINE"))
	if err != nil {
		return "", nil, err
	}
	list, err := os.ReadFile(filepath.Join(root, apiDir, "PACKAGES"))
	if err != nil {
		return "", nil, err
	}
	out := map[string]apiPackage{}
	for i, line := range strings.Split(string(list), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) > 2 {
			return "", nil, fmt.Errorf("PACKAGES:%d: %q: want an import path and a module path", i+1, line)
		}
		path, module := fields[0], ""
		if len(fields) == 2 {
			module = fields[1]
		}
		f, err := os.Open(exportFile(root, path))
		if err != nil {
			return "", nil, err
		}
		// Each file is read with imports of its own: two files may hold
		// different views of one dependency.
		p, err := gcexportdata.Read(bufio.NewReader(f), token.NewFileSet(), map[string]*types.Package{}, path)
		f.Close()
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, err)
		}
		out[path] = apiPackage{types: p, module: module}
	}
	return strings.TrimSpace(string(v)), out, nil
}

// mayBreak reports whether a release at next may change the API of one at
// base incompatibly: a new major version, or a new minor one below v1.
func mayBreak(base, next string) bool {
	if semver.Major(next) != semver.Major(base) {
		return semver.Compare(next, base) > 0
	}
	return semver.Major(base) == "v0" && semver.Compare(semver.MajorMinor(next), semver.MajorMinor(base)) > 0
}

// shared reports whether path is an internal package of the root module:
// the other modules import it, and an adapter module of an older release
// builds against the root module a user's build selects, so no version
// may change it incompatibly.
func shared(path string) bool {
	return strings.HasPrefix(path, modulePrefix+"/internal/") || strings.Contains(path, "/store/internal/")
}

// apiReport is what checkAPI finds.
type apiReport struct {
	incompatible []string // each "package: change", sorted
	compatible   []string
	notes        []string // what the baseline does not let it check
	allowed      bool     // whether a release at the version may make the incompatible changes
}

// checkAPI compares the tree's API with the baseline: the incompatible
// changes (a package removed or moved to another module among them), the
// compatible ones, and whether a release at version may make the
// incompatible ones (never, for a change to a shared internal package).
func checkAPI(root, version string) (apiReport, error) {
	var r apiReport
	base, old, err := readBaseline(root)
	if err != nil {
		return r, fmt.Errorf("reading the baseline (%s): %w", apiDir, err)
	}
	cur, err := loadPackages(root)
	if err != nil {
		return r, err
	}
	unrecorded := 0 // packages whose module the baseline does not say
	for path, o := range old {
		n, ok := cur[path]
		switch {
		case !ok && o.module != "":
			r.incompatible = append(r.incompatible, path+": package removed from "+o.module)
			continue
		case !ok:
			r.incompatible = append(r.incompatible, path+": package removed")
			continue
		case o.module == "":
			unrecorded++
		case o.module != n.module:
			r.incompatible = append(r.incompatible, path+": package moved from module "+o.module+" to "+n.module)
		}
		for _, c := range apidiff.Changes(o.types, n.types).Changes {
			if c.Compatible {
				r.compatible = append(r.compatible, path+": "+c.Message)
			} else {
				r.incompatible = append(r.incompatible, path+": "+c.Message)
			}
		}
	}
	for path := range cur {
		if _, ok := old[path]; !ok {
			r.compatible = append(r.compatible, path+": package added")
		}
	}
	slices.Sort(r.incompatible)
	slices.Sort(r.compatible)
	if unrecorded > 0 {
		r.notes = append(r.notes, fmt.Sprintf("%s/PACKAGES does not say the module of %d packages (a baseline of import paths alone): a move to another module goes unseen; release api -write records them", apiDir, unrecorded))
	}
	r.allowed = mayBreak(base, version)
	for _, c := range r.incompatible {
		path, _, _ := strings.Cut(c, ": ")
		if shared(path) {
			r.allowed = false
		}
	}
	return r, nil
}
