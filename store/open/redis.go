//go:build !leadership_no_redis

package open

import (
	"context"
	"strconv"

	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/redis"
)

// redisBackend opens a single Redis node through store/redis:
// redis://[user:pass@]h:6379[/DB][?tls=true&ca=FILE&cert=FILE&key=FILE&server_name=NAME],
// rediss:// with TLS.
// The build tag leadership_no_redis leaves it out (see redis_off.go).
var redisBackend = backend{name: "redis", schemes: []string{"redis", "rediss"}, open: (*Spec).openRedis}

func (s *Spec) openRedis(ctx context.Context, p *params) (store.Store, error) {
	eps, err := s.hostPorts("6379")
	if err != nil {
		return nil, err
	}
	db := 0
	if s.Path != "" {
		if db, err = strconv.Atoi(s.Path); err != nil || db < 0 {
			return nil, &ConfigError{Invalid: storeURL{}, Field: "db", Value: s.Path, Reason: "the path must be a database number, as in redis://host:6379/0"}
		}
	}
	tlsCfg := tlsConfig(p)
	if s.Scheme == "rediss" && tlsCfg == nil {
		tlsCfg = defaultTLS()
	}
	return openOnce(ctx, p, redis.Open, redis.Config{Endpoints: eps, Username: s.Username, Password: lstore.Secret(s.Password), DB: db, TLS: tlsCfg,
		DialTimeout: p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")})
}
