package open

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestSchemes checks that Schemes lists exactly the schemes of the
// backends this program can open, and that every scheme names one
// backend.
func TestSchemes(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range backends {
		for _, s := range b.schemes {
			if seen[s] {
				t.Errorf("scheme %q names two backends", s)
			}
			seen[s] = true
			if got := slices.Contains(Schemes, s); got != (b.open != nil) {
				t.Errorf("scheme %q in Schemes: %v, opens: %v", s, got, b.open != nil)
			}
		}
	}
	if !slices.Contains(Schemes, "memory") {
		t.Errorf("Schemes %v lacks memory, which every program has", Schemes)
	}
}

// TestBackendNeedsItsImport checks that a URL of a network backend whose
// adapter the program did not import (none is, here) says what to import.
func TestBackendNeedsItsImport(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		if b.name == "memory" || b.open != nil {
			continue
		}
		for _, scheme := range b.schemes {
			kv, err := Store(ctx, scheme+"://h:1")
			var ce *ConfigError
			switch {
			case kv != nil:
				t.Errorf("%s: opened a store", scheme)
			case !errors.Is(err, ErrBackendLeftOut) || !errors.Is(err, ErrUnknownScheme) || !errors.Is(err, ErrInvalidURL):
				t.Errorf("%s: %v, want ErrBackendLeftOut, ErrUnknownScheme and ErrInvalidURL", scheme, err)
			case !errors.As(err, &ce) || ce.Field != "scheme" || !strings.Contains(err.Error(), b.hint):
				t.Errorf("%s: %v, want a scheme error saying %s", scheme, err, b.hint)
			case slices.Contains(Schemes, scheme):
				t.Errorf("Schemes %v lists %s, which this program cannot open", Schemes, scheme)
			}
		}
	}
}

// TestLinksNoAdapter checks that this package links no network adapter
// and none of their client libraries: a program pulls those only by
// importing an adapter.
func TestLinksNoAdapter(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not in PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	heavy := []string{"google.golang.org/grpc", "go.etcd.io/", "github.com/hashicorp/", "github.com/go-zookeeper/",
		"github.com/redis/", "github.com/jackc/", "github.com/kvtools/etcdv3", "github.com/kvtools/consul",
		"github.com/kvtools/redis", "github.com/kvtools/zookeeper", "k8s.io/"}
	const module = "github.com/leadership-go/leadership/"
	for _, p := range strings.Fields(string(out)) {
		for _, h := range heavy {
			if strings.HasPrefix(p, h) {
				t.Errorf("store/open links %s", p)
			}
		}
		for _, b := range backends {
			if b.name != "memory" && strings.HasPrefix(p, module+"store/"+b.name) {
				t.Errorf("store/open links the adapter %s", p)
			}
		}
	}
}
