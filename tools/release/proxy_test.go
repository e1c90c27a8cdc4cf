package main

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestProxyZipsTrackedFilesOnly publishes a set from a git work tree with
// untracked files planted in it (a scratch file, build output, a file of
// a nested module) and a tracked file deleted, and checks that each
// module's zip holds exactly the files git tracks there, nested modules
// aside, plus the root's LICENSE for a nested module without one.
func TestProxyZipsTrackedFilesOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git command in PATH")
	}
	files := set()
	files["LICENSE"] = "the license\n"
	files["gone.go"] = "package leadership\n"
	files["store/etcd/etcd.go"] = "package etcd\n"
	files["store/etcd/testdata/x.txt"] = "tracked test data\n"
	root := tree(t, files)
	// No repository around the temporary directories counts.
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	for name, content := range map[string]string{
		"scratch.go":            "package leadership\n\nfunc Scratch() {}\n",
		"bin/leadership":        "build output\n",
		"store/etcd/notes.txt":  "scratch\n",
		"store/etcd/sub/new.go": "package sub\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(root, "gone.go")); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := writeProxy(root, "v0.3.0", out); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		module string
		want   []string
	}{
		{modulePrefix, []string{"LICENSE", "go.mod", "lib.go"}},
		{modulePrefix + "/store/etcd", []string{"LICENSE", "etcd.go", "go.mod", "testdata/x.txt"}},
	} {
		zr, err := zip.OpenReader(filepath.Join(out, filepath.FromSlash(tc.module), "@v", "v0.3.0.zip"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range zr.File {
			got = append(got, strings.TrimPrefix(f.Name, tc.module+"@v0.3.0/"))
		}
		zr.Close()
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s's zip holds %q, want %q (the tracked files)", tc.module, got, tc.want)
		}
	}
	// The release's tool is no released module: nothing of it is published.
	if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(modulePrefix), "tools")); !os.IsNotExist(err) {
		t.Errorf("tools/release published: %v", err)
	}
	// Outside a git work tree, the proxy refuses rather than guess.
	if err := writeProxy(tree(t, set()), "v0.3.0", t.TempDir()); err == nil || !strings.Contains(err.Error(), "git ls-files") {
		t.Errorf("a tree outside git: %v, want git ls-files' error", err)
	}
}
