// Package open opens any of this module's stores from a URL (Store,
// FromEnv) or a parsed Spec, so that swapping backends is a matter of
// configuration: memory://, etcd://, consul://, zk://, redis:// and
// postgres://.
//
// # Backends of other modules
//
// Register adds a backend defined outside this module. The Kubernetes
// Lease backend (k8s://NAMESPACE) is one: it lives in the module
// store/kubernetes, so that programs on the other backends never depend on
// client-go, and a program opens k8s:// URLs here once it imports
//
//	import _ "github.com/leadership-go/leadership/store/kubernetes/register"
//
// Without that import a k8s:// URL is a *ConfigError matching
// ErrBackendLeftOut that says what to import.
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
// The API is the same in every build. docs/cli.md gives the measured
// sizes of the command built so.
package open
