//go:build !leadership_no_etcd

package open

import (
	"context"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/etcd"
)

// etcdBackend opens etcd (v3) through store/etcd: etcd://[user:pass@]h1:2379,h2:2379[?tls=true&ca=FILE&cert=FILE&key=FILE].
// Against a member with --client-cert-auth, cert and key alone authenticate
// as the certificate's common name; user:pass, when given, takes precedence.
// The build tag leadership_no_etcd leaves it out (see etcd_off.go).
var etcdBackend = backend{name: "etcd", schemes: []string{"etcd"}, open: (*Spec).openEtcd}

func (s *Spec) openEtcd(ctx context.Context, p *params) (store.Store, error) {
	eps, err := s.hostPorts("2379")
	if err != nil {
		return nil, err
	}
	return openOnce(ctx, p, etcd.Open, etcd.Config{Endpoints: eps, Username: s.Username, Password: lstore.Secret(s.Password), TLS: tlsConfig(p),
		DialTimeout: p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")})
}
