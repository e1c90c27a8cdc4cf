// Package storetest holds the helpers the store adapters' tests share:
// the environment that names the test servers, TCP listeners that refuse,
// hang or hold connections, unique keys, waiting on channels and
// conditions, a key-prefixing store for valkeyrie's testsuite and a runner
// for that suite, and checks that several adapters run alike.
//
// It is imported by _test.go files only. It does not import the
// leadership package, so that store/memory's tests can use it too; the
// election helpers are in the electiontest subpackage.
package storetest
