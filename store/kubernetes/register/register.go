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
	"github.com/leadership-go/leadership/store/kubernetes"
	"github.com/leadership-go/leadership/store/open"
)

func init() { open.Register([]string{kubernetes.Scheme}, openURL) }

// openURL opens the store a k8s:// URL names.
func openURL(ctx context.Context, rawURL string) (store.Store, error) {
	cfg, err := kubernetes.ParseURL(rawURL)
	if err != nil {
		// Also open.ErrInvalidURL, as store/open's own URL errors: a
		// program (the command) tells a mistake in the URL by it.
		return nil, fmt.Errorf("%w: %w", open.ErrInvalidURL, err)
	}
	s, err := kubernetes.Open(ctx, cfg)
	var ce *kubernetes.ConfigError
	if errors.As(err, &ce) {
		// A kubeconfig that is missing or malformed, an unknown context:
		// the URL names a configuration that cannot be used, as a CA file
		// that does not exist is in an etcd:// URL.
		return nil, fmt.Errorf("%w: %w", open.ErrInvalidURL, err)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}
