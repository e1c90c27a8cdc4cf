package etcd

import (
	"reflect"
	"unsafe"

	"github.com/kvtools/etcdv3"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// quiet silences the etcd client inside kv. kvtools' Config has no logger
// field, so the client builds etcd's default zap logger, which writes a
// JSON line to stderr at every failed request attempt ("retrying of unary
// invoker failed"). The client is an unexported field of *etcdv3.Store:
// it is reached by reflection, and left alone (logging as before) if a
// later kvtools version changes that field. quiet must run before the
// store is used: the client's watchers and leases copy the logger when
// they are created. It changes nothing outside this client.
func quiet(kv *etcdv3.Store) bool {
	c := clientOf(kv)
	if c == nil {
		return false
	}
	c.WithLogger(zap.NewNop()) //nolint:staticcheck // the only way to replace the logger after etcdv3.New
	return true
}

// clientOf returns the etcd client of kv, or nil if kvtools' layout is not
// the expected one.
func clientOf(kv *etcdv3.Store) *clientv3.Client {
	if kv == nil {
		return nil
	}
	f := reflect.ValueOf(kv).Elem().FieldByName("client")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*clientv3.Client]() {
		return nil
	}
	return *(**clientv3.Client)(unsafe.Pointer(f.UnsafeAddr()))
}
