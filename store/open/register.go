package open

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/kvtools/valkeyrie/store"
)

// Opener opens the store a URL names, for Register: it gets the URL as
// given (scheme included) and parses it itself. An error about the URL's
// form or parameters should match ErrInvalidURL, as this package's own
// do.
type Opener func(ctx context.Context, rawURL string) (store.Store, error)

// registry guards the backends added by Register.
var registry sync.RWMutex

// kubernetesBackend is the Kubernetes Lease backend, which lives in a
// module of its own (store/kubernetes, so that programs on the other
// backends never depend on client-go): its scheme is known here, and
// refused with ErrBackendLeftOut saying what to import, until the package
// store/kubernetes/register registers it.
var kubernetesBackend = backend{name: "kubernetes", schemes: []string{"k8s"},
	hint: `import _ "github.com/leadership-go/leadership/store/kubernetes/register"`}

// Register makes Store, FromEnv and Spec.Open open URLs of the given
// schemes with open: it is how a backend defined outside this module
// joins them, as store/kubernetes/register does for k8s:// when a program
// imports it. Call it from an init function. Schemes are matched in lower
// case. Register panics when a scheme is empty, already registered, or
// names a backend this package builds in (whether or not this build
// leaves it out), or when open is nil.
func Register(schemes []string, open Opener) {
	if open == nil || len(schemes) == 0 {
		panic("open: Register needs schemes and an Opener")
	}
	registry.Lock()
	defer registry.Unlock()
	b := &backend{name: strings.ToLower(schemes[0])}
	for _, s := range schemes {
		s = strings.ToLower(s)
		if s == "" {
			panic("open: Register: empty scheme")
		}
		if old := backendForLocked(s); old != nil && old.open != nil {
			panic(fmt.Sprintf("open: Register: scheme %q is already taken", s))
		} else if old != nil && old.hint == "" {
			panic(fmt.Sprintf("open: Register: scheme %q names the built-in backend %s", s, old.name))
		}
		b.schemes = append(b.schemes, s)
	}
	b.open = func(s *Spec, ctx context.Context, _ *params) (store.Store, error) {
		return nonNil(open(ctx, s.raw))
	}
	for i, old := range backends {
		if old.hint != "" && old.schemes[0] == b.schemes[0] {
			b.name, b.hint = old.name, old.hint
			backends[i] = b
			Schemes = builtInSchemes()
			return
		}
	}
	backends = append(backends, b)
	Schemes = builtInSchemes()
}
