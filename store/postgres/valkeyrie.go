package postgres

import (
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

// StoreName is the name under which importing the package registers the
// store with valkeyrie: valkeyrie.NewStore(ctx, StoreName, endpoints,
// options) is Open with options (nil, or a *Config) and the endpoints,
// when given, as its DSN (the first one). The store.Store it returns is a
// *Store.
const StoreName = "leadership-postgres"

func init() {
	adapter.Register(StoreName, Open, func(c *Config, eps []string) { c.DSN = lstore.Secret(eps[0]) })
}
