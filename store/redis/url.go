package redis

import (
	"crypto/tls"
	"strconv"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// Importing the package registers redis:// and rediss:// with store/open.
func init() { open.RegisterAdapter([]string{"redis", "rediss"}, urlConfig, Open) }

// urlConfig reads a single Redis node:
// redis://[user:pass@]h:6379[/DB][?tls=true&ca=FILE&cert=FILE&key=FILE&server_name=NAME],
// rediss:// with TLS.
func urlConfig(s *open.Spec) (Config, error) {
	eps, err := s.HostPorts("6379")
	if err != nil {
		return Config{}, err
	}
	db := 0
	if s.Path != "" {
		if db, err = strconv.Atoi(s.Path); err != nil || db < 0 {
			return Config{}, s.Invalid("db", s.Path, "the path must be a database number, as in redis://host:6379/0", nil)
		}
	}
	tlsCfg := s.TLS()
	if s.Scheme == "rediss" && tlsCfg == nil {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return Config{Endpoints: eps, Username: s.Username, Password: lstore.Secret(s.Password), DB: db, TLS: tlsCfg,
		DialTimeout: s.Duration("dial_timeout"), RequestTimeout: s.Duration("request_timeout")}, nil
}
