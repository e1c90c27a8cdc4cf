package docsnippets

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runBy marks a shell block of docs/backends.md that a script runs:
// <!-- run by scripts/secure/etcd.sh --> on the line before the fence.
var runBy = regexp.MustCompile(`^<!-- run by (scripts/[\w./-]+) -->\s*$`)

// normalized is a block's lines without their indentation and blank lines.
func normalized(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The copy-paste examples of the docs that set up secured servers are the
// very commands the test servers are set up with: each block marked
// "run by SCRIPT" equals the text SCRIPT holds between "# docs:begin" and
// "# docs:end".
func TestDocsBlocksRunByScripts(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "backends.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	found := 0
	for i := 0; i < len(lines); i++ {
		m := runBy.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Errorf("docs/backends.md:%d: %q is not followed by a code block", i+1, lines[i])
			continue
		}
		var block []string
		j := i + 2
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			block = append(block, lines[j])
		}
		found++
		script, err := os.ReadFile(filepath.Join(root, m[1]))
		if err != nil {
			t.Errorf("docs/backends.md:%d: %v", i+1, err)
			continue
		}
		_, rest, ok1 := strings.Cut(string(script), "# docs:begin\n")
		inScript, _, ok2 := strings.Cut(rest, "# docs:end")
		if !ok1 || !ok2 {
			t.Errorf("%s has no '# docs:begin' ... '# docs:end' section", m[1])
			continue
		}
		if normalized(inScript) != normalized(strings.Join(block, "\n")) {
			t.Errorf("docs/backends.md:%d: the block differs from what %s runs:\ndocs:\n%s\n\nscript:\n%s",
				i+3, m[1], normalized(strings.Join(block, "\n")), normalized(inScript))
		}
		i = j
	}
	t.Logf("%d blocks checked", found)
}
