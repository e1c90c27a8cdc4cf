package zookeeper

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// Importing the package registers zk:// and zookeeper:// with store/open.
func init() { open.Register([]string{"zk", "zookeeper"}, openURL) }

// openURL opens ZooKeeper:
//
//	zk://[user:pass@]h1:2181,h2:2181[?session_timeout=10s][&acl=auth::cdrwa,digest:reader:BASE64:r][&ca=FILE&cert=FILE&key=FILE]
//
// user:pass authenticate the session with the digest scheme; acl is the
// ACL of the nodes the store creates (ZooKeeper's CLI form); the TLS parameters make
// it speak TLS to a secure client port.
func openURL(ctx context.Context, raw string) (store.Store, error) {
	s, err := open.Parse(raw)
	if err != nil {
		return nil, err
	}
	eps, err := s.HostPorts("2181")
	if err != nil {
		return nil, err
	}
	if s.HasAuth && (s.Username == "" || s.Password == "") {
		return nil, s.Invalid("user", s.Username, "digest auth needs user:password", nil)
	}
	var acl []zk.ACL
	if raw := s.Param("acl"); raw != "" {
		if acl, err = parseACL(raw); err != nil {
			reason := err.Error()
			var ce *lstore.ConfigError
			if errors.As(err, &ce) {
				reason = ce.Reason
			}
			return nil, s.Invalid("acl", "", reason, nil)
		}
	}
	cfg := Config{Endpoints: eps, Username: s.Username, Password: lstore.Secret(s.Password), ACL: acl, TLS: s.TLS(),
		SessionTimeout: s.Duration("session_timeout"),
		DialTimeout:    s.Duration("dial_timeout"), RequestTimeout: s.Duration("request_timeout")}
	if err := s.Check(); err != nil {
		return nil, err
	}
	kv, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return kv, nil
}
