//go:build leadership_no_zookeeper

package open

// zookeeperBackend is left out of this build by the tag leadership_no_zookeeper: its
// schemes are refused with ErrBackendLeftOut, and its adapter and client
// libraries are not linked.
var zookeeperBackend = backend{name: "zookeeper", schemes: []string{"zk", "zookeeper"}}
