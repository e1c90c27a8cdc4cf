package etcd

import (
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// Importing the package registers etcd:// with store/open.
func init() { open.RegisterAdapter([]string{"etcd"}, urlConfig, Open) }

// urlConfig reads etcd (v3): etcd://[user:pass@]h1:2379,h2:2379[?tls=true&ca=FILE&cert=FILE&key=FILE].
// Against a member with --client-cert-auth, cert and key alone authenticate
// as the certificate's common name; user:pass, when given, takes precedence.
func urlConfig(s *open.Spec) (Config, error) {
	eps, err := s.HostPorts("2379")
	if err != nil {
		return Config{}, err
	}
	return Config{Endpoints: eps, Username: s.Username, Password: lstore.Secret(s.Password), TLS: s.TLS(),
		DialTimeout: s.Duration("dial_timeout"), RequestTimeout: s.Duration("request_timeout")}, nil
}
