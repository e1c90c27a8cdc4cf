package docsnippets

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// snippet is one ```go block of a Markdown file.
type snippet struct {
	file    string
	line    int // of the block's first line of code
	imports []string
	body    string
}

var (
	fenceStart  = regexp.MustCompile("^```go\\s*$")
	importOne   = regexp.MustCompile(`^import\s+(_\s+)?("[^"]+")`)
	importGroup = regexp.MustCompile(`^\s*(_\s+)?("[^"]+")`)
)

// snippets returns the ```go blocks of the Markdown file path, their
// imports apart.
func snippets(t *testing.T, path string) []snippet {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []snippet
	var cur *snippet
	inImports := false
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && fenceStart.MatchString(line):
			cur = &snippet{file: path, line: i + 2}
		case cur == nil:
		case strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case inImports && strings.TrimSpace(line) == ")":
			inImports = false
			cur.body += "\n"
		case inImports:
			if m := importGroup.FindStringSubmatch(line); m != nil {
				cur.imports = append(cur.imports, m[1]+m[2])
			}
			cur.body += "\n"
		case strings.TrimSpace(line) == "import (":
			inImports = true
			cur.body += "\n"
		case importOne.MatchString(line):
			m := importOne.FindStringSubmatch(line)
			cur.imports = append(cur.imports, m[1]+m[2])
			cur.body += "\n"
		default:
			cur.body += line + "\n"
		}
	}
	return out
}

// The snippets are fragments: each becomes the body of a function whose
// parameters are the names the docs use without declaring them (ctx,
// client, kv). Unused variables and imports are allowed (a fragment stops
// where the reader's own code goes on); everything else must compile.
const preamble = `package docsnippets_gen

import (
	"context"
	"log"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

var _ = log.Print
var _ = time.Second

`

func TestDocsGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append([]string{filepath.Join(root, "README.md")}, files...)

	var src strings.Builder
	src.WriteString(preamble)
	imports := map[string]bool{}
	var where []string // the block of each function, by index
	for _, f := range files {
		for _, s := range snippets(t, f) {
			for _, imp := range s.imports {
				imports[imp] = true
			}
			rel, _ := filepath.Rel(root, s.file)
			fmt.Fprintf(&src, "func snippet%d(ctx context.Context, client store.Store, kv store.Store) {\n//line %s:%d\n%s}\n\n", len(where), rel, s.line, s.body)
			where = append(where, fmt.Sprintf("%s:%d", rel, s.line))
		}
	}
	if len(where) == 0 {
		t.Fatal("no ```go block found in README.md and docs/*.md")
	}
	var imps strings.Builder
	for imp := range imports {
		fmt.Fprintf(&imps, "import %s\n", imp)
	}
	code := strings.Replace(src.String(), "var _ = log.Print", imps.String()+"\nvar _ = log.Print", 1)

	// An overlay adds the generated file to the module without writing in it.
	dir := t.TempDir()
	gen := filepath.Join(dir, "snippets.go")
	if err := os.WriteFile(gen, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	virtual := filepath.Join(root, "internal", "docsnippets", "gen", "snippets.go")
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {virtual: gen}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-overlay", overlayFile, "-gcflags=-e", "./internal/docsnippets/gen")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Logf("%d Go blocks compile", len(where))
		return
	}
	var real []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || strings.Contains(line, "declared and not used") || strings.Contains(line, "imported and not used") {
			continue
		}
		real = append(real, line)
	}
	if len(real) > 0 {
		t.Errorf("Go blocks of the docs do not compile:\n%s\n\ngenerated:\n%s", strings.Join(real, "\n"), code)
	}
}
