// Package open opens a store from a URL (Store, FromEnv) or a parsed
// Spec, so that swapping backends is a matter of configuration:
// memory://, etcd://, consul://, zk://, redis://, postgres:// and k8s://.
//
// # One import per backend
//
// The embedded store (memory://) is built in. Every network backend is an
// adapter in a Go module of its own, so that a program pulls only the
// client libraries of the backends it uses; importing the adapter
// registers its schemes here (Register), as database/sql drivers do:
//
//	import _ "github.com/leadership-go/leadership/store/etcd"                // etcd://
//	import _ "github.com/leadership-go/leadership/store/consul"              // consul://
//	import _ "github.com/leadership-go/leadership/store/zookeeper"           // zk://, zookeeper://
//	import _ "github.com/leadership-go/leadership/store/redis"               // redis://, rediss://
//	import _ "github.com/leadership-go/leadership/store/postgres"            // postgres://, postgresql://
//	import _ "github.com/leadership-go/leadership/store/kubernetes" // k8s://
//
// and one import brings them all, for a program that takes its backend
// from configuration alone:
//
//	import _ "github.com/leadership-go/leadership/store/all"
//
// A URL whose adapter the program did not import is a *ConfigError
// matching ErrBackendLeftOut (and ErrUnknownScheme) that names the import
// to add; Schemes lists what the program can open.
package open
