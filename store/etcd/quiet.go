package etcd

import (
	"context"
	"reflect"
	"unsafe"

	"github.com/kvtools/etcdv3"
	"github.com/kvtools/valkeyrie/store"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// newKV is etcdv3.New with a silent etcd client. kvtools' Config has no
// logger field, so etcdv3.New's client builds etcd's default zap logger,
// which writes a JSON line to stderr at every failed request attempt
// ("retrying of unary invoker failed"), and the client authenticates
// (Username) inside its constructor, before quiet could swap the logger:
// a wrong password, an unknown user or a server that never answers each
// printed such a line. newKV creates the client itself, as etcdv3.New
// would (createConfig: http or https endpoints, TLS, dial timeout,
// credentials), with a logger that discards everything, and puts it in a
// kvtools store. The store's only field is the unexported client: when a
// later kvtools version changes that layout, newKV falls back to
// etcdv3.New and quiet (logging as before during the constructor).
func newKV(ctx context.Context, endpoints []string, kcfg *etcdv3.Config) (*etcdv3.Store, error) {
	if !layoutKnown() {
		kv, err := etcdv3.New(ctx, endpoints, kcfg)
		if err != nil {
			return nil, err
		}
		quiet(kv)
		return kv, nil
	}
	ccfg := clientv3.Config{
		Endpoints:   store.CreateEndpoints(endpoints, "http"),
		DialTimeout: kcfg.ConnectionTimeout,
		Username:    kcfg.Username,
		Password:    kcfg.Password,
		Logger:      zap.NewNop(),
	}
	if kcfg.TLS != nil {
		ccfg.Endpoints = store.CreateEndpoints(endpoints, "https")
		ccfg.TLS = kcfg.TLS
	}
	c, err := clientv3.New(ccfg)
	if err != nil {
		return nil, err
	}
	kv := new(etcdv3.Store)
	*clientField(kv) = c
	return kv, nil
}

// layoutKnown reports whether etcdv3.Store is a struct of one field,
// client *clientv3.Client, so that a Store holding only a client is a
// whole one.
func layoutKnown() bool {
	t := reflect.TypeFor[etcdv3.Store]()
	return t.NumField() == 1 && t.Field(0).Name == "client" && t.Field(0).Type == reflect.TypeFor[*clientv3.Client]()
}

// quiet silences the etcd client inside kv, made by etcdv3.New (see
// newKV). The client is reached by reflection, and left alone (logging as
// before) if a later kvtools version changes that field. quiet must run
// before the store is used: the client's watchers and leases copy the
// logger when they are created. It changes nothing outside this client.
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
	p := clientField(kv)
	if p == nil {
		return nil
	}
	return *p
}

// clientField returns the address of kv's client field, or nil if
// kvtools' layout has no such field.
func clientField(kv *etcdv3.Store) **clientv3.Client {
	f := reflect.ValueOf(kv).Elem().FieldByName("client")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*clientv3.Client]() {
		return nil
	}
	return (**clientv3.Client)(unsafe.Pointer(f.UnsafeAddr()))
}
