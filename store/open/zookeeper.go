//go:build !leadership_no_zookeeper

package open

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/zookeeper"
)

// zookeeperBackend opens ZooKeeper through store/zookeeper:
//
//	zk://[user:pass@]h1:2181,h2:2181[?session_timeout=10s][&acl=auth::cdrwa,digest:reader:BASE64:r][&ca=FILE&cert=FILE&key=FILE]
//
// user:pass authenticate the session with the digest scheme; acl is the
// ACL of the nodes the store creates (zookeeper.ParseACL); the TLS
// parameters (tls.go) make it speak TLS to a secure client port.
// The build tag leadership_no_zookeeper leaves it out (see zookeeper_off.go).
var zookeeperBackend = backend{name: "zookeeper", schemes: []string{"zk", "zookeeper"}, open: (*Spec).openZooKeeper}

func (s *Spec) openZooKeeper(ctx context.Context, p *params) (store.Store, error) {
	eps, err := s.hostPorts("2181")
	if err != nil {
		return nil, err
	}
	if s.HasAuth && (s.Username == "" || s.Password == "") {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "user", Value: s.Username, Reason: "digest auth needs user:password"}
	}
	var acl []zk.ACL
	if raw := p.str("acl"); raw != "" {
		if acl, err = zookeeper.ParseACL(raw); err != nil {
			reason := err.Error()
			var ce *ConfigError
			if errors.As(err, &ce) {
				reason = ce.Reason
			}
			return nil, &ConfigError{Invalid: storeURL{}, Field: "acl", Reason: reason, Err: nil}
		}
	}
	return openOnce(ctx, p, zookeeper.Open, zookeeper.Config{Endpoints: eps, Username: s.Username, Password: lstore.Secret(s.Password),
		ACL: acl, TLS: tlsConfig(p),
		SessionTimeout: p.duration("session_timeout"),
		DialTimeout:    p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")})
}
