// Package all registers every backend with store/open when a program
// imports it, for a program that takes its backend from configuration
// alone:
//
//	import _ "github.com/leadership-go/leadership/store/all"
//
// Then open.Store, open.FromEnv and the command open etcd://, consul://,
// zk://, redis://, postgres:// and k8s:// URLs as well as memory://. The
// price is every backend's client library in the program's module graph
// and binary; a program on one backend imports that backend's adapter
// instead (docs/backends.md, "What an import costs").
package all

import (
	_ "github.com/leadership-go/leadership/store/consul"     // consul://
	_ "github.com/leadership-go/leadership/store/etcd"       // etcd://
	_ "github.com/leadership-go/leadership/store/kubernetes" // k8s://
	_ "github.com/leadership-go/leadership/store/postgres"   // postgres://, postgresql://
	_ "github.com/leadership-go/leadership/store/redis"      // redis://, rediss://
	_ "github.com/leadership-go/leadership/store/zookeeper"  // zk://, zookeeper://
)
