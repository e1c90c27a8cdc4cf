//go:build !leadership_no_zookeeper

package open

import (
	"context"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/zookeeper"
)

// zookeeperBackend opens ZooKeeper through store/zookeeper: zk://[user:pass@]h1:2181,h2:2181[?session_timeout=10s].
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
	return openOnce(ctx, p, zookeeper.Open, zookeeper.Config{Endpoints: eps, Username: s.Username, Password: s.Password,
		SessionTimeout: p.duration("session_timeout"),
		DialTimeout:    p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")})
}
