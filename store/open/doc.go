// Package open opens any of this module's stores from a URL (Store,
// FromEnv) or a parsed Spec, so that swapping backends is a matter of
// configuration: memory://, etcd://, consul://, zk://, redis:// and
// postgres://.
//
// # Leaving backends out
//
// By default every backend is linked, and with it every client library:
// gRPC and the etcd client, the Consul API, the ZooKeeper client, go-redis
// and pgx. A program that needs fewer builds with one tag per backend to
// leave out:
//
//	leadership_no_etcd       etcd://
//	leadership_no_consul     consul://
//	leadership_no_zookeeper  zk://, zookeeper://
//	leadership_no_redis      redis://, rediss://
//	leadership_no_postgres   postgres://, postgresql://
//
// For instance, a program on etcd only:
//
//	go build -tags leadership_no_consul,leadership_no_zookeeper,leadership_no_redis,leadership_no_postgres
//
// The embedded store (memory://) is always in. A URL naming a backend left
// out is a *ConfigError matching ErrBackendLeftOut (and ErrUnknownScheme),
// which says which tag removed it; Schemes lists what the build can open.
// The API is the same in every build. docs/backends.md gives the measured
// sizes.
package open
