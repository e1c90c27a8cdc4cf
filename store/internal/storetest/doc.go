// Package storetest holds the helpers the store adapters' tests share:
// the environment that names the test servers, TCP listeners that refuse,
// hang or hold connections, unique keys, waiting on channels and
// conditions, a runner for valkeyrie's testsuite (under a key prefix on a
// shared server), and checks that several adapters run alike: Open
// against unreachable servers, invalid configurations, watches, a server
// cut off after Open, Close.
//
// It is imported by _test.go files only. It does not import the
// leadership package, so that store/memory's tests can use it too; the
// election helpers are in the electiontest subpackage.
package storetest
