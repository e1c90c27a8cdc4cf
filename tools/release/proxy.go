package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	mod "golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// writeProxy publishes every released module under root at version into
// dir, laid out as a module proxy (GOPROXY=file://DIR): for each module
// @v/list, VERSION.info, VERSION.mod and VERSION.zip. The zip holds what
// a tag would: the files of the module's directory that git tracks
// (trackedFiles), as the work tree has them, nested modules left out, and
// the root's LICENSE for a nested module without one, as the go command
// adds it. Untracked files (scratch files, build output) never ship; a
// new file ships once added to git's index. A consumer then builds
// against the tree as if it were released. root must be a git work tree.
func writeProxy(root, version, dir string) error {
	mods, err := findModules(root)
	if err != nil {
		return err
	}
	for _, m := range mods {
		if !m.released() {
			continue
		}
		esc, err := mod.EscapePath(m.path)
		if err != nil {
			return err
		}
		at := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			return err
		}
		info, _ := json.Marshal(struct {
			Version string
			Time    time.Time
		}{version, time.Now().UTC().Truncate(time.Second)})
		gomod, err := os.ReadFile(filepath.Join(root, m.dir, "go.mod"))
		if err != nil {
			return err
		}
		for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				return err
			}
		}
		files, err := trackedFiles(root, m.dir)
		if err != nil {
			return fmt.Errorf("%s: %w", m.path, err)
		}
		z, err := os.Create(filepath.Join(at, version+".zip"))
		if err != nil {
			return err
		}
		err = zip.Create(z, mod.Version{Path: m.path, Version: version}, files)
		if cerr := z.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m.path, err)
		}
	}
	return nil
}

// trackedFiles returns the files of the module in dir (below root) for
// its zip: those git tracks there (git ls-files), read from the work
// tree, less those of a nested module (a directory below dir holding a
// go.mod) and those deleted from the work tree; with the root's tracked
// LICENSE for a nested module that has none of its own.
func trackedFiles(root, dir string) ([]zip.File, error) {
	list := func(wd string, args ...string) ([]string, error) {
		cmd := exec.Command("git", append([]string{"ls-files", "-z", "--cached", "--"}, args...)...)
		cmd.Dir = wd
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git ls-files in %s (the proxy zips the files git tracks): %v: %s", wd, err, bytes.TrimSpace(stderr.Bytes()))
		}
		return strings.FieldsFunc(string(out), func(r rune) bool { return r == 0 }), nil
	}
	modDir := filepath.Join(root, filepath.FromSlash(dir))
	names, err := list(modDir, ".")
	if err != nil {
		return nil, err
	}
	// nested reports whether the directory d (slash-separated, relative
	// to modDir, "." for modDir itself) is in a nested module.
	nestedDirs := map[string]bool{}
	var nested func(d string) bool
	nested = func(d string) bool {
		if d == "." {
			return false
		}
		if v, ok := nestedDirs[d]; ok {
			return v
		}
		fi, err := os.Lstat(filepath.Join(modDir, filepath.FromSlash(d), "go.mod"))
		v := err == nil && fi.Mode().IsRegular() || nested(path.Dir(d))
		nestedDirs[d] = v
		return v
	}
	var files []zip.File
	for _, name := range names {
		if nested(path.Dir(name)) {
			continue
		}
		f, err := workFile(modDir, name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted, not yet committed
			}
			return nil, err
		}
		files = append(files, f)
	}
	if dir != "." && !slices.Contains(names, "LICENSE") {
		if lic, err := list(root, "LICENSE"); err == nil && len(lic) == 1 {
			f, err := workFile(root, "LICENSE")
			if err == nil {
				files = append(files, f)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
	}
	return files, nil
}

// workFile is the file name (slash-separated, relative to dir) of the
// work tree, for zip.Create.
func workFile(dir, name string) (zip.File, error) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	return treeFile{name: name, path: p, info: fi}, nil
}

// treeFile is a file of the work tree, as zip.Create reads it.
type treeFile struct {
	name, path string
	info       fs.FileInfo
}

func (f treeFile) Path() string                 { return f.name }
func (f treeFile) Lstat() (fs.FileInfo, error)  { return f.info, nil }
func (f treeFile) Open() (io.ReadCloser, error) { return os.Open(f.path) }
