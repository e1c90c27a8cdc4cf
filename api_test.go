package leadership

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
	"testing/synctest"
)

// One path: the standby claim (WithStandby) and the takeover lead are gone
// from the package, exported or not (issue 23). A handed-over term is
// always taken by the successor's own write, and a waiter always gives the
// holder its whole TTL.
func TestNoStandbyNoTakeoverLead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fset := token.NewFileSet()
		entries, err := os.ReadDir(".")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					low := strings.ToLower(id.Name)
					if strings.Contains(low, "standby") || strings.Contains(low, "takeoverlead") || strings.Contains(low, "marginms") {
						t.Errorf("%s: %s", fset.Position(id.Pos()), id.Name)
					}
				}
				return true
			})
		}
	})
}
