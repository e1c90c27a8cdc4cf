package open

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// builtIn reports whether this build can open the scheme of rawURL, so that
// tests of a backend left out by its build tag skip it.
func builtIn(rawURL string) bool {
	scheme, _, _ := strings.Cut(rawURL, "://")
	b := backendFor(scheme)
	return b != nil && b.open != nil
}

// skipLeftOut skips the test when this build leaves the backend name out.
func skipLeftOut(t *testing.T, name string) {
	t.Helper()
	for _, b := range backends {
		if b.name == name && b.open == nil {
			t.Skipf("built with %s", b.tag())
		}
	}
}

// TestSchemes checks that Schemes lists exactly the schemes of the
// backends in this build, and that every scheme names one backend.
func TestSchemes(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range backends {
		for _, s := range b.schemes {
			if seen[s] {
				t.Errorf("scheme %q names two backends", s)
			}
			seen[s] = true
			if got := slices.Contains(Schemes, s); got != (b.open != nil) {
				t.Errorf("scheme %q in Schemes: %v, built in: %v", s, got, b.open != nil)
			}
		}
	}
	if !slices.Contains(Schemes, "memory") {
		t.Errorf("Schemes %v lacks memory, which every build has", Schemes)
	}
}

// TestBackendLeftOut checks the error for a URL whose backend a build tag
// left out, by taking each network backend out in turn.
func TestBackendLeftOut(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		if b.name == "memory" || b.hint != "" {
			continue
		}
		saved := b.open
		b.open = nil
		for _, scheme := range b.schemes {
			kv, err := Store(ctx, scheme+"://h:1")
			var ce *ConfigError
			switch {
			case kv != nil:
				t.Errorf("%s: opened a store", scheme)
			case !errors.Is(err, ErrBackendLeftOut) || !errors.Is(err, ErrUnknownScheme) || !errors.Is(err, ErrInvalidURL):
				t.Errorf("%s: %v, want ErrBackendLeftOut, ErrUnknownScheme and ErrInvalidURL", scheme, err)
			case !errors.As(err, &ce) || ce.Field != "scheme" || !strings.Contains(err.Error(), b.tag()):
				t.Errorf("%s: %v, want a scheme error naming the tag %s", scheme, err, b.tag())
			}
		}
		b.open = saved
	}
}

// TestTagsUnlinkBackends checks that the package compiles with each
// leadership_no_NAME tag and with all of them, that each tag drops its
// adapter, and that all of them together leave none of the client
// libraries linked.
func TestTagsUnlinkBackends(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not in PATH")
	}
	const module = "github.com/leadership-go/leadership/"
	// deps compiles the package with the tags and lists the packages it
	// links.
	deps := func(tags ...string) []string {
		t.Helper()
		joined := strings.Join(tags, ",")
		if out, err := exec.Command(goTool, "build", "-tags", joined, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build -tags %s: %v\n%s", joined, err, out)
		}
		out, err := exec.Command(goTool, "list", "-deps", "-tags", joined, ".").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -tags %s: %v\n%s", joined, err, out)
		}
		return strings.Fields(string(out))
	}
	var all []string
	for _, b := range backends {
		if b.name == "memory" || b.hint != "" {
			continue
		}
		all = append(all, b.tag())
		if got := deps(b.tag()); slices.Contains(got, module+"store/"+b.name) {
			t.Errorf("-tags %s still links store/%s", b.tag(), b.name)
		}
	}
	heavy := []string{"google.golang.org/grpc", "go.etcd.io/", "github.com/hashicorp/", "github.com/go-zookeeper/",
		"github.com/redis/", "github.com/jackc/", "github.com/kvtools/etcdv3", "github.com/kvtools/consul",
		"github.com/kvtools/redis", "github.com/kvtools/zookeeper"}
	got := deps(all...)
	for _, p := range got {
		for _, h := range heavy {
			if strings.HasPrefix(p, h) {
				t.Errorf("with every backend left out, %s is still linked", p)
			}
		}
	}
	if !slices.Contains(got, module+"store/memory") {
		t.Errorf("with every backend left out, store/memory is not linked")
	}
}
