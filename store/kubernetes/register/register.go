// Package register adds the Kubernetes backend to store/open: a program
// that imports it for its side effect opens k8s://NAMESPACE URLs with
// open.Store and open.FromEnv like any other backend's.
//
//	import _ "github.com/leadership-go/leadership/store/kubernetes/register"
//
//	s, err := open.Store(ctx, "k8s://my-namespace?context=prod")
//
// The URL is parsed by kubernetes.ParseURL (kubeconfig=, context=,
// dial_timeout= and request_timeout= parameters). Its errors, and those of
// a configuration the URL names that cannot be used (a missing or
// malformed kubeconfig, an unknown context), also match open.ErrInvalidURL. It is a package of its
// own so that a program that opens its Kubernetes store with
// kubernetes.Open, not by URL, does not link store/open and the other
// backends' clients.
package register

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/kubernetes"
	"github.com/leadership-go/leadership/store/open"
)

func init() { open.Register([]string{kubernetes.Scheme}, openURL) }

// openURL opens the store a k8s:// URL names. A *store.ConfigError (package
// github.com/leadership-go/leadership/store),
// from the URL or from the configuration it names (a kubeconfig missing or
// malformed, an unknown context, as a missing CA file in an etcd:// URL),
// also matches open.ErrInvalidURL, as store/open's own URL errors do: a
// program (the command) tells a mistake in the URL by it.
func openURL(ctx context.Context, rawURL string) (store.Store, error) {
	cfg, err := kubernetes.ParseURL(rawURL)
	var s *kubernetes.Store
	if err == nil {
		s, err = kubernetes.Open(ctx, cfg)
	}
	var ce *lstore.ConfigError
	switch {
	case errors.As(err, &ce):
		return nil, fmt.Errorf("%w: %w", open.ErrInvalidURL, err)
	case err != nil:
		return nil, err
	}
	return s, nil
}
