package etcd

import (
	"context"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// Importing the package registers etcd:// with store/open.
func init() { open.Register([]string{"etcd"}, openURL) }

// openURL opens etcd (v3): etcd://[user:pass@]h1:2379,h2:2379[?tls=true&ca=FILE&cert=FILE&key=FILE].
// Against a member with --client-cert-auth, cert and key alone authenticate
// as the certificate's common name; user:pass, when given, takes precedence.
func openURL(ctx context.Context, raw string) (store.Store, error) {
	s, err := open.Parse(raw)
	if err != nil {
		return nil, err
	}
	eps, err := s.HostPorts("2379")
	if err != nil {
		return nil, err
	}
	cfg := Config{Endpoints: eps, Username: s.Username, Password: lstore.Secret(s.Password), TLS: s.TLS(),
		DialTimeout: s.Duration("dial_timeout"), RequestTimeout: s.Duration("request_timeout")}
	if err := s.Check(); err != nil {
		return nil, err
	}
	kv, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return kv, nil
}
