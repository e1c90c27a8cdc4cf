//go:build leadership_no_etcd

package open

// etcdBackend is left out of this build by the tag leadership_no_etcd: its
// schemes are refused with ErrBackendLeftOut, and its adapter and client
// libraries are not linked.
var etcdBackend = backend{name: "etcd", schemes: []string{"etcd"}}
