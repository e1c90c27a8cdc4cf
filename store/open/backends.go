package open

import (
	"context"

	"github.com/kvtools/valkeyrie/store"
)

// backend is one kind of store that Spec.Open can reach: the URL schemes
// that name it and how to open it. Each network backend is defined in a
// file of its own, compiled unless the build tag leadership_no_NAME is
// set; with the tag, a file NAME_off.go defines it without open, so that
// its adapter, and every client library that adapter imports, is not
// linked.
type backend struct {
	name    string   // as in the build tag: etcd, consul, zookeeper, redis, postgres
	schemes []string // the URL schemes that name it, lower case
	// open connects to the store s names, reading its parameters from p;
	// nil when this build leaves the backend out.
	open func(s *Spec, ctx context.Context, p *params) (store.Store, error)
	// hint, for a backend of another module, says what a program imports
	// to have it (Register); "" for the backends built in here.
	hint string
}

// backends lists every backend this package knows, built in or not, in the
// order Schemes shows them.
// Register adds to it, or replaces the entry of a backend of another module.
var backends = []*backend{&memoryBackend, &etcdBackend, &consulBackend, &zookeeperBackend, &redisBackend, &postgresBackend, &kubernetesBackend}

// tag is the build tag that leaves b out.
func (b *backend) tag() string { return "leadership_no_" + b.name }

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

// openOnce opens cfg with open, an adapter's Open, once every parameter of
// p was read (p.done: an unknown parameter, or one the backend could not
// read, is an error before any network activity).
func openOnce[C any, S store.Store](ctx context.Context, p *params, open func(context.Context, C) (S, error), cfg C) (store.Store, error) {
	if err := p.done(); err != nil {
		return nil, err
	}
	return nonNil(open(ctx, cfg))
}
