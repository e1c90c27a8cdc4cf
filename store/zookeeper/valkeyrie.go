package zookeeper

import (
	"context"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// StoreName is the name under which New is registered with valkeyrie
// (kvtools' own ZooKeeper store has "zookeeper").
const StoreName = "leadership-zookeeper"

func init() { valkeyrie.Register(StoreName, New) }

// New is the valkeyrie constructor of the store: Open with options (nil,
// or a *Config) whose Endpoints are endpoints when given. The returned
// value is a *Store.
func New(ctx context.Context, endpoints []string, options valkeyrie.Config) (store.Store, error) {
	return adapter.New(ctx, StoreName, endpoints, options, func(c *Config, eps []string) { c.Endpoints = eps }, Open)
}
