package zookeeper

import (
	"errors"

	"github.com/go-zookeeper/zk"
	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// Importing the package registers zk:// and zookeeper:// with store/open.
func init() { open.RegisterAdapter([]string{"zk", "zookeeper"}, urlConfig, Open) }

// urlConfig reads ZooKeeper:
//
//	zk://[user:pass@]h1:2181,h2:2181[?session_timeout=10s][&acl=auth::cdrwa,digest:reader:BASE64:r][&ca=FILE&cert=FILE&key=FILE]
//
// user:pass authenticate the session with the digest scheme; acl is the
// ACL of the nodes the store creates (ZooKeeper's CLI form); the TLS parameters make
// it speak TLS to a secure client port.
func urlConfig(s *open.Spec) (Config, error) {
	eps, err := s.HostPorts("2181")
	if err != nil {
		return Config{}, err
	}
	if s.HasAuth && (s.Username == "" || s.Password == "") {
		return Config{}, s.Invalid("user", s.Username, "digest auth needs user:password", nil)
	}
	var acl []zk.ACL
	if raw := s.Param("acl"); raw != "" {
		if acl, err = parseACL(raw); err != nil {
			reason := err.Error()
			var ce *lstore.ConfigError
			if errors.As(err, &ce) {
				reason = ce.Reason
			}
			return Config{}, s.Invalid("acl", "", reason, nil)
		}
	}
	return Config{Endpoints: eps, Username: s.Username, Password: lstore.Secret(s.Password), ACL: acl, TLS: s.TLS(),
		SessionTimeout: s.Duration("session_timeout"),
		DialTimeout:    s.Duration("dial_timeout"), RequestTimeout: s.Duration("request_timeout")}, nil
}
