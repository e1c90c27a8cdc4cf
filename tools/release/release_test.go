package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tree writes files (path: content) under a new directory and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// set is a consistent release set at v0.3.0: the root module and an
// adapter requiring it.
func set() map[string]string {
	return map[string]string{
		"go.mod":               "module github.com/leadership-go/leadership\n\ngo 1.25\n",
		"lib.go":               "package leadership\n\n// F is the API.\nfunc F() int { return 1 }\n",
		"store/etcd/go.mod":    "module github.com/leadership-go/leadership/store/etcd\n\ngo 1.25\n\nrequire github.com/leadership-go/leadership v0.3.0\n",
		"tools/release/go.mod": "module github.com/leadership-go/leadership/tools/release\n\ngo 1.25\n",
	}
}

// TestCheckAcceptsConsistentSet checks that a consistent set passes.
func TestCheckAcceptsConsistentSet(t *testing.T) {
	problems, err := checkSet(tree(t, set()), "v0.3.0")
	if err != nil || len(problems) > 0 {
		t.Fatalf("%v %q, want no problem", err, problems)
	}
}

// TestCheckRefusesBadSets checks that the release refuses each kind of
// inconsistent set, and says why.
func TestCheckRefusesBadSets(t *testing.T) {
	for _, tc := range []struct {
		name, version, file, content, want string
	}{
		{"replace", "v0.3.0", "store/etcd/go.mod",
			"module github.com/leadership-go/leadership/store/etcd\n\ngo 1.25\n\nrequire github.com/leadership-go/leadership v0.3.0\n\nreplace github.com/leadership-go/leadership => ../..\n",
			"replace github.com/leadership-go/leadership"},
		{"other version", "v0.3.0", "store/etcd/go.mod",
			"module github.com/leadership-go/leadership/store/etcd\n\ngo 1.25\n\nrequire github.com/leadership-go/leadership v0.2.0\n",
			"not the release's v0.3.0"},
		{"never published", "v0.3.0", "store/etcd/go.mod",
			"module github.com/leadership-go/leadership/store/etcd\n\ngo 1.25\n\nrequire github.com/leadership-go/leadership v0.0.0-00010101000000-000000000000\n",
			"not the release's v0.3.0"},
		{"module left out", "v0.3.0", "store/etcd/go.mod",
			"module github.com/leadership-go/leadership/store/etcd\n\ngo 1.25\n\nrequire github.com/leadership-go/leadership/tools/release v0.3.0\n",
			"which the release leaves out"},
		{"no such module", "v0.3.0", "store/etcd/go.mod",
			"module github.com/leadership-go/leadership/store/etcd\n\ngo 1.25\n\nrequire github.com/leadership-go/leadership/store/nosuch v0.3.0\n",
			"no module of the repository"},
		{"misplaced module", "v0.3.0", "store/redis/go.mod",
			"module github.com/leadership-go/leadership/store/etcd\n\ngo 1.25\n",
			"want github.com/leadership-go/leadership/store/redis"},
		{"bad version", "0.3", "", "", "not a canonical semantic version"},
		{"exclude", "v0.3.0", "store/etcd/go.mod",
			"module github.com/leadership-go/leadership/store/etcd\n\ngo 1.25\n\nrequire github.com/leadership-go/leadership v0.3.0\n\nexclude example.com/x v1.0.0\n",
			"exclude example.com/x"},
		{"go.work at another version", "v0.3.0", "go.work",
			"go 1.25\n\nuse (\n\t.\n\t./store/etcd\n)\n\nreplace github.com/leadership-go/leadership v0.2.0 => ./\n",
			"go.work: replaces github.com/leadership-go/leadership v0.2.0"},
		{"go.work leaves a module out", "v0.3.0", "go.work", "go 1.25\n\nuse .\n", "go.work: does not use store/etcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := set()
			if tc.file != "" {
				files[tc.file] = tc.content
			}
			problems, err := checkSet(tree(t, files), tc.version)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Fatalf("problems %q, want one saying %q", problems, tc.want)
			}
			if run([]string{"check", "-root", tree(t, files), "-version", tc.version}) != 1 {
				t.Fatal("release check did not exit 1")
			}
		})
	}
}

// TestAPICheckRefusesIncompatibleChange plants an incompatible change
// (a function's result type changed, another removed) after the baseline
// and checks that the API check fails at the baseline's version, passes
// at a version that allows it, and passes a compatible addition.
func TestAPICheckRefusesIncompatibleChange(t *testing.T) {
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	files := set()
	files["lib.go"] = "package leadership\n\n// F is the API.\nfunc F() int { return 1 }\n\n// G too.\nfunc G() {}\n"
	root := tree(t, files)
	if err := writeAPI(root, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	write := func(src string) {
		if err := os.WriteFile(filepath.Join(root, "lib.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package leadership\n\n// F is the API.\nfunc F() int { return 1 }\n\n// G too.\nfunc G() {}\n\n// H is new.\nfunc H() {}\n")
	if code := run([]string{"api", "-root", root, "-version", "v0.3.1"}); code != 0 {
		t.Fatalf("a compatible addition: exit %d, want 0", code)
	}
	write("package leadership\n\n// F is the API.\nfunc F() string { return \"\" }\n")
	r, err := checkAPI(root, "v0.3.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.incompatible) != 2 || r.allowed {
		t.Fatalf("incompatible %q, allowed %v: want F's change and G's removal, refused", r.incompatible, r.allowed)
	}
	if code := run([]string{"api", "-root", root, "-version", "v0.3.1"}); code != 1 {
		t.Fatalf("an incompatible change at v0.3.1: exit %d, want 1", code)
	}
	if code := run([]string{"api", "-root", root, "-version", "v0.4.0"}); code != 0 {
		t.Fatalf("an incompatible change at v0.4.0: exit %d, want 0 (a new minor version below v1 may break)", code)
	}
}

// TestAPICheckRefusesMovedPackage plants a package that moves from the
// root module to a module of its own under the same import path, and one
// that disappears, and checks that the API check refuses each at the
// baseline's version and allows it at one that may break; that the
// baseline records each package's module; and that a baseline of import
// paths alone (written before modules were recorded) still reads, its
// modules unchecked and said so.
func TestAPICheckRefusesMovedPackage(t *testing.T) {
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	files := set()
	files["store/x/x.go"] = "package x\n\n// X is the API.\nfunc X() {}\n"
	files["store/y/y.go"] = "package y\n\n// Y is the API.\nfunc Y() {}\n"
	root := tree(t, files)
	if err := writeAPI(root, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join(root, apiDir, "PACKAGES"))
	if err != nil {
		t.Fatal(err)
	}
	if want := modulePrefix + "/store/x " + modulePrefix + "\n"; !strings.Contains(string(list), want) {
		t.Fatalf("api/PACKAGES:\n%s\nwant a line %q", list, want)
	}
	if code := run([]string{"api", "-root", root, "-version", "v0.3.1"}); code != 0 {
		t.Fatalf("nothing changed: exit %d, want 0", code)
	}
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// store/x becomes a module of its own: same import path, same API.
	write("store/x/go.mod", "module "+modulePrefix+"/store/x\n\ngo 1.25\n")
	r, err := checkAPI(root, "v0.3.1")
	if err != nil {
		t.Fatal(err)
	}
	want := modulePrefix + "/store/x: package moved from module " + modulePrefix + " to " + modulePrefix + "/store/x"
	if !slices.Equal(r.incompatible, []string{want}) || r.allowed {
		t.Fatalf("incompatible %q, allowed %v: want %q, refused", r.incompatible, r.allowed, want)
	}
	if code := run([]string{"api", "-root", root, "-version", "v0.3.1"}); code != 1 {
		t.Fatalf("a package moved at v0.3.1: exit %d, want 1", code)
	}
	if code := run([]string{"api", "-root", root, "-version", "v0.4.0"}); code != 0 {
		t.Fatalf("a package moved at v0.4.0: exit %d, want 0 (a new minor version below v1 may break)", code)
	}
	// store/y disappears.
	if err := os.RemoveAll(filepath.Join(root, "store/y")); err != nil {
		t.Fatal(err)
	}
	r, err = checkAPI(root, "v0.3.1")
	if err != nil {
		t.Fatal(err)
	}
	if want := modulePrefix + "/store/y: package removed from " + modulePrefix; !slices.Contains(r.incompatible, want) || r.allowed {
		t.Fatalf("incompatible %q, allowed %v: want %q among them, refused", r.incompatible, r.allowed, want)
	}
	// A baseline without modules: the move goes unchecked, and is said so.
	var paths []string
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		paths = append(paths, strings.Fields(line)[0])
	}
	write("api/PACKAGES", strings.Join(paths, "\n")+"\n")
	write("store/y/y.go", "package y\n\n// Y is the API.\nfunc Y() {}\n")
	r, err = checkAPI(root, "v0.3.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.incompatible) != 0 || len(r.notes) != 1 || !strings.Contains(r.notes[0], fmt.Sprintf("the module of %d packages", len(paths))) {
		t.Fatalf("a baseline of import paths alone: incompatible %q, notes %q: want none, and a note that %d modules are not recorded", r.incompatible, r.notes, len(paths))
	}
}

// TestAPICheckKeepsSharedInternals checks that an incompatible change to
// an internal package of the root module, which the adapters' modules
// import, is refused whatever the version.
func TestAPICheckKeepsSharedInternals(t *testing.T) {
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	files := set()
	files["store/internal/adapter/a.go"] = "package adapter\n\n// OpenDeadline is shared.\nfunc OpenDeadline() {}\n"
	root := tree(t, files)
	if err := writeAPI(root, "v0.3.0"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "store/internal/adapter/a.go"), []byte("package adapter\n\n// OpenBy is shared.\nfunc OpenBy() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v0.4.0", "v1.0.0"} {
		if code := run([]string{"api", "-root", root, "-version", v}); code != 1 {
			t.Errorf("a shared internal package changed at %s: exit %d, want 1", v, code)
		}
	}
}

// TestMayBreak checks the versions that may change the API incompatibly.
func TestMayBreak(t *testing.T) {
	for _, tc := range []struct {
		base, next string
		want       bool
	}{
		{"v0.1.0", "v0.1.1", false}, {"v0.1.0", "v0.2.0", true}, {"v0.1.0", "v0.1.0", false},
		{"v1.2.0", "v1.3.0", false}, {"v1.2.0", "v2.0.0", true}, {"v1.2.0", "v1.2.1", false},
	} {
		if got := mayBreak(tc.base, tc.next); got != tc.want {
			t.Errorf("mayBreak(%s, %s) = %v, want %v", tc.base, tc.next, got, tc.want)
		}
	}
}
