package adapter

import (
	"context"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"
)

// New is the body of every adapter's valkeyrie constructor (New in its
// valkeyrie.go): options must be nil or a *C, else the error is valkeyrie's
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
