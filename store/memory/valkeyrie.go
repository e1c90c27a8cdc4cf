package memory

import "github.com/leadership-go/leadership/store/internal/adapter"

// StoreName is the name under which importing the package registers the
// store with valkeyrie: valkeyrie.NewStore(ctx, StoreName, endpoints,
// options) is Open with options (nil, or a *Config) and the endpoints,
// when given, as its Name (the first one: handles opened with one name
// share one backend). The store.Store it returns is a *Store.
const StoreName = "leadership-memory"

func init() { adapter.Register(StoreName, Open, func(c *Config, eps []string) { c.Name = eps[0] }) }
