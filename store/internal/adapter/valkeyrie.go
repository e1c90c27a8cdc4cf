package adapter

import (
	"context"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"
)

// Register registers with valkeyrie, under name, the constructor of an
// adapter whose Open is open: valkeyrie.NewStore(ctx, name, endpoints,
// options) opens the store (see New). Every adapter's valkeyrie.go calls
// it from init.
func Register[C any, S store.Store](name string, open func(context.Context, C) (S, error), set func(*C, []string)) {
	valkeyrie.Register(name, func(ctx context.Context, endpoints []string, options valkeyrie.Config) (store.Store, error) {
		return New(ctx, name, endpoints, options, set, open)
	})
}

// New is the valkeyrie constructor of an adapter registered by Register:
// options must be nil or a *C, else the error is valkeyrie's
// *store.InvalidConfigurationError naming name; endpoints, when given,
// are put in the Config by set; open is the adapter's Open. A failed open
// returns a nil store.Store, not a typed nil.
func New[C any, S store.Store](ctx context.Context, name string, endpoints []string, options valkeyrie.Config,
	set func(*C, []string), open func(context.Context, C) (S, error),
) (store.Store, error) {
	var cfg C
	if options != nil {
		c, ok := options.(*C)
		if !ok {
			return nil, &store.InvalidConfigurationError{Store: name, Config: options}
		}
		if c != nil {
			cfg = *c
		}
	}
	if len(endpoints) > 0 {
		set(&cfg, endpoints)
	}
	s, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s, nil
}
