//go:build !leadership_no_consul

package open

import (
	"context"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/consul"
)

// consulBackend opens Consul through store/consul: consul://[token@]h:8500[?token=T&tls=true&ca=FILE].
// The build tag leadership_no_consul leaves it out (see consul_off.go).
var consulBackend = backend{name: "consul", schemes: []string{"consul"}, open: (*Spec).openConsul}

func (s *Spec) openConsul(ctx context.Context, p *params) (store.Store, error) {
	eps, err := s.hostPorts("8500")
	if err != nil {
		return nil, err
	}
	token := p.str("token")
	if token == "" && s.HasAuth {
		token = s.Username // consul://TOKEN@host
		if s.Password != "" {
			token = s.Password // consul://anything:TOKEN@host
		}
	}
	return openOnce(ctx, p, consul.Open, consul.Config{Endpoints: eps, Token: lstore.Secret(token), TLS: tlsConfig(p),
		DialTimeout: p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")})
}
