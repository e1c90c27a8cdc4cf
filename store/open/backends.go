package open

import (
	"context"

	"github.com/kvtools/valkeyrie/store"
)

// backend is one kind of store that Spec.Open can reach: the URL schemes
// that name it and how to open it. The embedded store is built in; every
// network backend lives in a module of its own and registers its schemes
// when a program imports its adapter (Register). Until then its entry is a
// placeholder that says what to import.
type backend struct {
	name    string   // etcd, consul, zookeeper, redis, postgres, kubernetes
	schemes []string // the URL schemes that name it, lower case
	// open connects to the store s names; nil while the backend's
	// adapter is not imported.
	open func(s *Spec, ctx context.Context) (store.Store, error)
	// hint, for a backend of another module, says what a program imports
	// to have it (Register); "" for the embedded store.
	hint string
}

// adapterBackend is the placeholder of the network backend name, whose
// adapter is the package store/DIR of a module of its own.
func adapterBackend(name, dir string, schemes ...string) *backend {
	return &backend{name: name, schemes: schemes,
		hint: `import _ "github.com/leadership-go/leadership/store/` + dir + `"`}
}

// backends lists every backend this package knows, imported or not, in the
// order Schemes shows them. Register fills in a placeholder, or adds a
// backend this package does not know.
var backends = []*backend{
	&memoryBackend,
	adapterBackend("etcd", "etcd", "etcd"),
	adapterBackend("consul", "consul", "consul"),
	adapterBackend("zookeeper", "zookeeper", "zk", "zookeeper"),
	adapterBackend("redis", "redis", "redis", "rediss"),
	adapterBackend("postgres", "postgres", "postgres", "postgresql"),
	adapterBackend("kubernetes", "kubernetes", "k8s"),
}

// backendFor returns the backend a scheme names, or nil.
func backendFor(scheme string) *backend {
	registry.RLock()
	defer registry.RUnlock()
	return backendForLocked(scheme)
}

// backendForLocked is backendFor, with registry held.
func backendForLocked(scheme string) *backend {
	for _, b := range backends {
		for _, s := range b.schemes {
			if s == scheme {
				return b
			}
		}
	}
	return nil
}

// builtInSchemes returns the schemes of the backends of this build.
func builtInSchemes() []string {
	var out []string
	for _, b := range backends {
		if b.open != nil {
			out = append(out, b.schemes...)
		}
	}
	return out
}
