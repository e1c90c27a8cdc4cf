//go:build leadership_no_consul

package open

// consulBackend is left out of this build by the tag leadership_no_consul: its
// schemes are refused with ErrBackendLeftOut, and its adapter and client
// libraries are not linked.
var consulBackend = backend{name: "consul", schemes: []string{"consul"}}
