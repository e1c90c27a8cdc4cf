package main

// leftOut maps a backend the command was built without (a
// leadership_no_NAME tag: backend_NAME_off.go) to why it cannot be
// opened; a URL of it is then a usage error saying so.
var leftOut = map[string]string{}

// backendOfScheme names the backend of each scheme the command knows.
var backendOfScheme = map[string]string{
	"etcd": "etcd", "consul": "consul", "zk": "zookeeper", "zookeeper": "zookeeper",
	"redis": "redis", "rediss": "redis", "postgres": "postgres", "postgresql": "postgres", "k8s": "kubernetes",
}
