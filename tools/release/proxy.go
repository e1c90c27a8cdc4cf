package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	mod "golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// writeProxy publishes every released module under root at version into
// dir, laid out as a module proxy (GOPROXY=file://DIR): for each module
// @v/list, VERSION.info, VERSION.mod and VERSION.zip, the zip made by
// golang.org/x/mod/zip from the directory as the go command would make
// it from a tag (nested modules left out). A consumer then builds against
// the tree as if it were released.
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
		z, err := os.Create(filepath.Join(at, version+".zip"))
		if err != nil {
			return err
		}
		err = zip.CreateFromDir(z, mod.Version{Path: m.path, Version: version}, filepath.Join(root, m.dir))
		if cerr := z.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m.path, err)
		}
	}
	return nil
}
