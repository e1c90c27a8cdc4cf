package consul

import (
	"context"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// Importing the package registers consul:// with store/open.
func init() { open.Register([]string{"consul"}, openURL) }

// openURL opens Consul: consul://[token@]h:8500[?token=T&tls=true&ca=FILE].
func openURL(ctx context.Context, raw string) (store.Store, error) {
	s, err := open.Parse(raw)
	if err != nil {
		return nil, err
	}
	eps, err := s.HostPorts("8500")
	if err != nil {
		return nil, err
	}
	token := s.Param("token")
	if token == "" && s.HasAuth {
		token = s.Username // consul://TOKEN@host
		if s.Password != "" {
			token = s.Password // consul://anything:TOKEN@host
		}
	}
	cfg := Config{Endpoints: eps, Token: lstore.Secret(token), TLS: s.TLS(),
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
