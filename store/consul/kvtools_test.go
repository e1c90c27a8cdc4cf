package consul

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/guard"
)

// wrap applies what can be fixed from outside to a Consul store built
// elsewhere, typically kvtools/consul's from valkeyrie.NewStore(ctx,
// "consul", ...):
//
//   - every call returns by its context's deadline, or after
//     requestTimeout when it has none (kvtools ignores contexts and uses
//     http.DefaultClient, without timeouts), and a watch never blocks its
//     backend goroutine once its reader is gone;
//   - AtomicPut's reply is verified: kvtools answers a successful
//     compare-and-swap with a separate read, which may return a later
//     writer's pair. When the value read is not the value written,
//     AtomicPut returns errUnverifiedWrite instead of a wrong pair (the
//     write landed; read the key to go on);
//   - Watch gets the key without its leading "/", as the other calls do.
//
// Not fixable from outside: the watch still skips deletes and stops at
// the first error, its reads are not consistent, and a call abandoned at
// its deadline keeps running in the background until the server answers.
func wrap(s store.Store, requestTimeout time.Duration) store.Store {
	return guard.Wrap(&fixed{Store: s}, requestTimeout)
}

// errUnverifiedWrite is returned by AtomicPut on a store made by wrap
// when the compare-and-swap succeeded but the pair read back afterwards
// is not the value written (another write came in between): the write
// landed, but its index is unknown. Read the key to go on.
var errUnverifiedWrite = errors.New("consul: write succeeded but its index could not be verified")

type fixed struct {
	store.Store
}

func (f *fixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	ok, pair, err := f.Store.AtomicPut(ctx, key, value, previous, opts)
	if err != nil || !ok {
		return ok, pair, err
	}
	if pair == nil || !bytes.Equal(pair.Value, value) {
		return false, nil, fmt.Errorf("consul: atomic put %q: %w", key, errUnverifiedWrite)
	}
	return true, pair, nil
}

func (f *fixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	return f.Store.Watch(ctx, strings.TrimLeft(key, "/"), opts)
}
