package kubernetes

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// Importing the package registers k8s:// with store/open: open.Store and
// open.FromEnv then open k8s://NAMESPACE URLs (parameters kubeconfig=,
// context=, dial_timeout= and request_timeout=) like any other backend's.
func init() { open.Register([]string{scheme}, openURL) }

// openURL opens the store a k8s:// URL names. A *store.ConfigError (package
// github.com/leadership-go/leadership/store), from the URL or from the
// configuration it names (a kubeconfig missing or malformed, an unknown
// context, as a missing CA file in an etcd:// URL), also matches
// open.ErrInvalidURL, as store/open's own URL errors do: a program (the
// command) tells a mistake in the URL by it.
func openURL(ctx context.Context, rawURL string) (store.Store, error) {
	cfg, err := parseURL(rawURL)
	var s *Store
	if err == nil {
		s, err = Open(ctx, cfg)
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
