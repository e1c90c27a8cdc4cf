// Package adapter holds what every store adapter (store/etcd,
// store/consul, store/zookeeper, store/redis, store/postgres,
// store/memory, store/open) would otherwise write again: the typed errors
// they return (ConfigError, the shared store.ConfigError under an alias,
// and UnreachableError, which the adapters do not export: callers match
// it with errors.Is(err, store.ErrUnreachable)); the checks of their Config types (endpoint addresses,
// timeouts that take a default when zero); and Classified, the layer that
// makes a wrapped store's connection errors match store.ErrNotReachable.
package adapter
