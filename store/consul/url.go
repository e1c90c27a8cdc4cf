package consul

import (
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// Importing the package registers consul:// with store/open.
func init() { open.RegisterAdapter([]string{"consul"}, urlConfig, Open) }

// urlConfig reads Consul: consul://[token@]h:8500[?token=T&tls=true&ca=FILE].
func urlConfig(s *open.Spec) (Config, error) {
	eps, err := s.HostPorts("8500")
	if err != nil {
		return Config{}, err
	}
	token := s.Param("token")
	if token == "" && s.HasAuth {
		token = s.Username // consul://TOKEN@host
		if s.Password != "" {
			token = s.Password // consul://anything:TOKEN@host
		}
	}
	return Config{Endpoints: eps, Token: lstore.Secret(token), TLS: s.TLS(),
		DialTimeout: s.Duration("dial_timeout"), RequestTimeout: s.Duration("request_timeout")}, nil
}
