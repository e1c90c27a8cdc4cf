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
// api/BASELINE. checkAPI compares the tree with it by
// golang.org/x/exp/apidiff: an incompatible change is refused unless the
// version the tree will be released as (VERSION) says so: a new major
// version, or from v0 a new minor one.

// apiDir is the baseline's directory, below the repository root.
const apiDir = "api"

// loadPackages type-checks every non-main package of the released modules
// under root, keyed by import path.
func loadPackages(root string) (map[string]*types.Package, error) {
	mods, err := findModules(root)
	if err != nil {
		return nil, err
	}
	out := map[string]*types.Package{}
	for _, m := range mods {
		if !m.released() {
			continue
		}
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
			out[p.PkgPath] = p.Types
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
		if err := gcexportdata.Write(w, token.NewFileSet(), p); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		index = append(index, path)
	}
	slices.Sort(index)
	if err := os.WriteFile(filepath.Join(root, apiDir, "PACKAGES"), []byte(strings.Join(index, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, apiDir, "BASELINE"), []byte(version+"\n"), 0o644)
}

// readBaseline returns the baseline's version and packages.
func readBaseline(root string) (string, map[string]*types.Package, error) {
	v, err := os.ReadFile(filepath.Join(root, apiDir, "BASELINE"))
	if err != nil {
		return "", nil, err
	}
	list, err := os.ReadFile(filepath.Join(root, apiDir, "PACKAGES"))
	if err != nil {
		return "", nil, err
	}
	out := map[string]*types.Package{}
	var imports map[string]*types.Package
	for _, path := range strings.Fields(string(list)) {
		f, err := os.Open(exportFile(root, path))
		if err != nil {
			return "", nil, err
		}
		// Each file is read with imports of its own: two files may hold
		// different views of one dependency.
		imports = map[string]*types.Package{}
		out[path], err = gcexportdata.Read(bufio.NewReader(f), token.NewFileSet(), imports, path)
		f.Close()
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", path, err)
		}
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

// checkAPI compares the tree's API with the baseline: it returns the
// incompatible changes (each "package: change"), the compatible ones, and
// whether a release at version may make the incompatible ones (never, for
// a change to a shared internal package).
func checkAPI(root, version string) (incompatible, compatible []string, allowed bool, err error) {
	base, old, err := readBaseline(root)
	if err != nil {
		return nil, nil, false, fmt.Errorf("reading the baseline (%s): %w", apiDir, err)
	}
	cur, err := loadPackages(root)
	if err != nil {
		return nil, nil, false, err
	}
	for path, o := range old {
		n, ok := cur[path]
		if !ok {
			incompatible = append(incompatible, path+": package removed")
			continue
		}
		r := apidiff.Changes(o, n)
		for _, c := range r.Changes {
			if c.Compatible {
				compatible = append(compatible, path+": "+c.Message)
			} else {
				incompatible = append(incompatible, path+": "+c.Message)
			}
		}
	}
	for path := range cur {
		if _, ok := old[path]; !ok {
			compatible = append(compatible, path+": package added")
		}
	}
	slices.Sort(incompatible)
	slices.Sort(compatible)
	allowed = mayBreak(base, version)
	for _, c := range incompatible {
		path, _, _ := strings.Cut(c, ": ")
		if shared(path) {
			allowed = false
		}
	}
	return incompatible, compatible, allowed, nil
}
