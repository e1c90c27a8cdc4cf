package open

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/consul"
	"github.com/leadership-go/leadership/store/etcd"
	"github.com/leadership-go/leadership/store/memory"
	"github.com/leadership-go/leadership/store/postgres"
	"github.com/leadership-go/leadership/store/redis"
	"github.com/leadership-go/leadership/store/zookeeper"
)

// EnvVar is the environment variable FromEnv reads by default.
const EnvVar = "LEADERSHIP_STORE"

// Schemes lists the URL schemes Store understands.
var Schemes = []string{"memory", "etcd", "consul", "zk", "zookeeper", "redis", "rediss", "postgres", "postgresql"}

// Store opens the store a URL names, connects, and checks it with a round
// trip. Swapping backends is a matter of changing the URL:
//
//	memory://NAME                                      the embedded store; one per NAME in the process
//	etcd://[user:pass@]h1:2379,h2:2379[?tls=true&ca=FILE&cert=FILE&key=FILE]
//	consul://[token@]h:8500[?token=T&tls=true&ca=FILE]
//	zk://[user:pass@]h1:2181,h2:2181[?session_timeout=10s]    (digest auth with user:pass)
//	redis://[user:pass@]h:6379[/DB][?tls=true]        (rediss:// is redis with TLS)
//	postgres://user:pass@h:5432/db?sslmode=disable[&table=NAME]   (a libpq/pgx DSN)
//
// Every network scheme also takes dial_timeout and request_timeout (such as
// 5s). An unknown parameter, a malformed value or an unknown scheme is a
// *ConfigError naming the field; an unreachable store is an error matching
// store.ErrNotReachable.
func Store(ctx context.Context, rawURL string) (store.Store, error) {
	s, err := Parse(rawURL)
	if err != nil {
		return nil, err
	}
	return s.Open(ctx)
}

// FromEnv opens the store named by the environment variable name
// (EnvVar when name is "").
func FromEnv(ctx context.Context, name string) (store.Store, error) {
	if name == "" {
		name = EnvVar
	}
	raw := os.Getenv(name)
	if strings.TrimSpace(raw) == "" {
		return nil, &ConfigError{Invalid: storeURL{}, Field: name, Reason: "environment variable is unset or empty", Err: ErrNoURL}
	}
	return Store(ctx, raw)
}

// Open connects to the store the spec names.
func (s *Spec) Open(ctx context.Context) (store.Store, error) {
	p := newParams(s.Params)
	switch s.Scheme {
	case "memory":
		return s.openMemory(p)
	case "etcd":
		return s.openEtcd(ctx, p)
	case "consul":
		return s.openConsul(ctx, p)
	case "zk", "zookeeper":
		return s.openZooKeeper(ctx, p)
	case "redis", "rediss":
		return s.openRedis(ctx, p)
	case "postgres", "postgresql":
		return s.openPostgres(ctx, p)
	}
	return nil, &ConfigError{Invalid: storeURL{}, Field: "scheme", Value: s.Scheme, Reason: "unknown; want one of " + strings.Join(Schemes, ", "), Err: ErrUnknownScheme}
}

func (s *Spec) openMemory(p *params) (store.Store, error) {
	name := s.Path
	if len(s.Endpoints) > 0 {
		name = strings.Join(s.Endpoints, ",")
	}
	if name == "" {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Reason: "memory:// needs a name, as in memory://my-cluster"}
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	return nonNil(memory.Open(name))
}

func (s *Spec) openEtcd(ctx context.Context, p *params) (store.Store, error) {
	eps, err := s.hostPorts("2379")
	if err != nil {
		return nil, err
	}
	cfg := etcd.Config{Endpoints: eps, Username: s.Username, Password: s.Password, TLS: tlsConfig(p),
		DialTimeout: p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")}
	if err := p.done(); err != nil {
		return nil, err
	}
	return etcd.Open(ctx, cfg)
}

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
	cfg := consul.Config{Endpoints: eps, Token: token, TLS: tlsConfig(p),
		DialTimeout: p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")}
	if err := p.done(); err != nil {
		return nil, err
	}
	return consul.Open(ctx, cfg)
}

func (s *Spec) openZooKeeper(ctx context.Context, p *params) (store.Store, error) {
	eps, err := s.hostPorts("2181")
	if err != nil {
		return nil, err
	}
	if s.HasAuth && (s.Username == "" || s.Password == "") {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "user", Value: s.Username, Reason: "digest auth needs user:password"}
	}
	cfg := zookeeper.Config{Endpoints: eps, Username: s.Username, Password: s.Password,
		SessionTimeout: p.duration("session_timeout"),
		DialTimeout:    p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")}
	if err := p.done(); err != nil {
		return nil, err
	}
	return zookeeper.Open(ctx, cfg)
}

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
	cfg := redis.Config{Endpoints: eps, Username: s.Username, Password: s.Password, DB: db, TLS: tlsCfg,
		DialTimeout: p.duration("dial_timeout"), RequestTimeout: p.duration("request_timeout")}
	if err := p.done(); err != nil {
		return nil, err
	}
	return redis.Open(ctx, cfg)
}

// openPostgres hands the URL to pgx as a DSN, less this library's own
// parameters (table, channel).
func (s *Spec) openPostgres(ctx context.Context, _ *params) (store.Store, error) {
	if len(s.Endpoints) == 0 {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Reason: "no host given"}
	}
	cfg := postgres.Config{Table: s.Params.Get("table"), Channel: s.Params.Get("channel")}
	q := s.Params
	q.Del("table")
	q.Del("channel")
	dsn := s.raw
	if i := strings.IndexByte(dsn, '?'); i >= 0 {
		dsn = dsn[:i]
	}
	if enc := q.Encode(); enc != "" {
		dsn += "?" + enc
	}
	cfg.DSN = dsn
	return postgres.Open(ctx, cfg)
}

// nonNil keeps a nil concrete store from becoming a non-nil interface.
func nonNil[S store.Store](s S, err error) (store.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}
