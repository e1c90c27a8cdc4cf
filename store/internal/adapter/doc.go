// Package adapter holds what every store adapter (store/etcd,
// store/consul, store/zookeeper, store/redis, store/postgres,
// store/memory, store/open) would otherwise write again: the typed errors
// they return (ConfigError, UnreachableError), exposed by each package
// under an alias; the checks of their Config types (endpoint addresses,
// timeouts that take a default when zero); and Classified, the layer that
// makes a wrapped store's connection errors match store.ErrNotReachable.
package adapter
