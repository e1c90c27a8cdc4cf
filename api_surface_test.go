package leadership

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// exportedNames lists the package's exported API the way issue 24 counts
// it: exported funcs, types, vars and consts, and the methods of exported
// types (an interface's methods included), in non-test files.
func exportedNames(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	p := pkgs["leadership"]
	if p == nil {
		t.Fatal("package leadership not found")
	}
	d := doc.New(p, "github.com/leadership-go/leadership", 0)
	var names []string
	add := func(n string) {
		if ast.IsExported(n[strings.LastIndex(n, ".")+1:]) {
			names = append(names, n)
		}
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, n := range v.Names {
				add(n)
			}
		}
	}
	values(d.Consts)
	values(d.Vars)
	for _, f := range d.Funcs {
		add(f.Name)
	}
	for _, ty := range d.Types {
		add(ty.Name)
		values(ty.Consts)
		values(ty.Vars)
		for _, f := range ty.Funcs {
			add(f.Name)
		}
		for _, m := range ty.Methods {
			add(ty.Name + "." + m.Name)
		}
		for _, spec := range ty.Decl.Specs {
			it, ok := spec.(*ast.TypeSpec).Type.(*ast.InterfaceType)
			if !ok {
				continue
			}
			for _, m := range it.Methods.List {
				for _, n := range m.Names {
					add(ty.Name + "." + n.Name)
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// The API stays small (issue 24 counted 133 names, issue 33 93, now 85): one way
// to do each thing beside the seeds' faces.
func TestExportedNamesStayFew(t *testing.T) {
	names := exportedNames(t)
	t.Logf("%d exported names", len(names))
	if len(names) > 85 {
		t.Errorf("%d exported names, want at most 85:\n%s", len(names), strings.Join(names, "\n"))
	}
}

// Every exported name is in the README's table of the API.
func TestReadmeNamesEveryExport(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "## The API at a glance")
	if start < 0 {
		t.Fatal("README.md has no section \"The API at a glance\"")
	}
	section := text[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	for _, n := range exportedNames(t) {
		name := n[strings.LastIndex(n, ".")+1:]
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(section) {
			t.Errorf("%s is not in the README's API table", n)
		}
	}
}

// docs/design.md opens with a map of the code: every non-test file of the
// root package is in it, and every file and package it names exists.
func TestDesignMapMatchesTheCode(t *testing.T) {
	design, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(design)
	end := strings.Index(text, "The path of one election.")
	if end < 0 {
		t.Fatal("docs/design.md: no map before \"The path of one election.\"")
	}
	mapText := text[:end]
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		n := f.Name()
		if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") && !strings.Contains(mapText, "| `"+n+"` |") {
			t.Errorf("%s is not in the map of docs/design.md", n)
		}
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+\\.go)` \\|").FindAllStringSubmatch(mapText, -1) {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("the map names %s, which does not exist", m[1])
		}
	}
	for _, m := range regexp.MustCompile("`((?:internal|store|cmd|metrics|health|fenced|leadershiptest|bench|tools)(?:/[a-z0-9_]+)*)`").FindAllStringSubmatch(mapText, -1) {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("the map names %s, which does not exist", m[1])
		}
	}
}

// docs/design.md's claims about the files hold: every Go file it names
// anywhere exists (in the root package or under one of its directories),
// clock.go is the only file of the root package that reads the time
// package's clock or makes its timers (the rest go through the injected
// timeSource), and abandon.go is the only one that calls the store.
func TestDesignClaimsMatchTheCode(t *testing.T) {
	design, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(d.Name(), ".go") {
			exists[d.Name()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\b([a-z0-9_]+\.go)\b`).FindAllStringSubmatch(string(design), -1) {
		if !exists[m[1]] {
			t.Errorf("docs/design.md names %s, which does not exist", m[1])
		}
	}

	clockCalls := map[string]bool{"Now": true, "Since": true, "Until": true, "NewTimer": true, "After": true,
		"AfterFunc": true, "Sleep": true, "NewTicker": true, "Tick": true}
	storeCall := regexp.MustCompile(`\.(AtomicPut|AtomicDelete|FencedPut)\(|client\.(Get|Watch)\(`)
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if name != "abandon.go" {
			for _, loc := range storeCall.FindAllIndex(src, -1) {
				t.Errorf("%s:%d: a store call outside abandon.go", name, 1+strings.Count(string(src[:loc[0]]), "\n"))
			}
		}
		if name == "clock.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		timePkg := ""
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "time" {
				timePkg = "time"
				if imp.Name != nil {
					timePkg = imp.Name.Name
				}
			}
		}
		if timePkg == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == timePkg && clockCalls[sel.Sel.Name] {
				t.Errorf("%s: time.%s: the engine's time comes from its timeSource (clock.go)", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
