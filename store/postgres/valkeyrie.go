package postgres

import (
	"context"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// StoreName is the name under which New is registered with valkeyrie.
const StoreName = "postgres"

func init() { valkeyrie.Register(StoreName, New) }

// New is the valkeyrie constructor of the store: Open with options (nil,
// or a *Config) whose DSN is endpoints[0] when given. The returned value
// is a *Store.
func New(ctx context.Context, endpoints []string, options valkeyrie.Config) (store.Store, error) {
	return adapter.New(ctx, StoreName, endpoints, options, func(c *Config, eps []string) { c.DSN = eps[0] }, Open)
}
