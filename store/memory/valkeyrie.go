package memory

import (
	"context"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// StoreName is the name under which New is registered with valkeyrie.
const StoreName = "memory"

func init() { valkeyrie.Register(StoreName, New) }

// New is the valkeyrie constructor of the store: Open with options (nil,
// or a *Config) whose Name is endpoints[0] when given. Handles opened with
// the same name share one backend. The returned value is a *Store.
func New(ctx context.Context, endpoints []string, options valkeyrie.Config) (store.Store, error) {
	return adapter.New(ctx, StoreName, endpoints, options, func(c *Config, eps []string) { c.Name = eps[0] }, Open)
}
