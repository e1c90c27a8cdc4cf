package zookeeper

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
)

const (
	// defaultSessionTimeout is the ZooKeeper session timeout asked for when
	// Config.SessionTimeout is zero. The server clamps it to between 2 and
	// 20 of its ticks.
	defaultSessionTimeout = 10 * time.Second

	// defaultDialTimeout bounds Open (connection, session and first round
	// trip) when Config.DialTimeout is zero.
	defaultDialTimeout = adapter.DefaultDialTimeout

	// defaultRequestTimeout bounds every call whose context has no deadline
	// when Config.RequestTimeout is zero.
	defaultRequestTimeout = adapter.DefaultRequestTimeout

	// closeGrace bounds how long Close waits for the client's goroutines.
	closeGrace = 5 * time.Second
)

// Config of a ZooKeeper store for elections. Zero values take the
// documented defaults.
type Config struct {
	// Endpoints are the ensemble's client addresses, host:port. At least
	// one is required; the client connects to one at a time, in random
	// order, and moves to another when it fails.
	Endpoints []string

	// Username and Password, when Username is set, authenticate the
	// session with the digest scheme. The nodes the store then creates are
	// given every right for that digest identity only (as ZooKeeper's
	// CREATOR_ALL_ACL, but without the x509 identity of a TLS client
	// certificate, which other users may share): only sessions
	// authenticated as the same user can read or change them. Without a Username nodes are
	// created open to all (OPEN_ACL_UNSAFE), as kvtools does. ACL
	// replaces either. ZooKeeper accepts any digest password (the identity
	// is the digest of both): a wrong one shows as the first refused call,
	// an *AccessError matching store.ErrAuth when the node's ACL is
	// readable and grants the user the right refused.
	Username string
	// Password is a store.Secret: fmt, JSON and slog show it masked.
	Password lstore.Secret

	// ACL, when set, is the ACL of every node the store creates (the
	// election's record and its missing parents), instead of the defaults
	// above; the zk:// URL's acl= parameter takes ZooKeeper's CLI form. For an election: every
	// right for the candidate's identity and read for the followers',
	// such as "auth::cdrwa,digest:reader:BASE64:r". The scheme auth
	// stands for the store's own digest identity (Username, Password) and
	// needs a Username. It is a []zk.ACL whose digests fmt, JSON and slog
	// show masked.
	ACL aclList

	// TLS, when set, makes the client speak TLS to the servers' secure
	// client port (secureClientPort) with this configuration: its
	// RootCAs, client certificate, ServerName (the endpoint's host when
	// empty). A failed handshake, or a client certificate the server
	// refuses, fails Open at once with an error saying so.
	TLS *tls.Config

	// SessionTimeout is the ZooKeeper session timeout: how long the
	// ensemble keeps the session (its ephemeral nodes and locks) after
	// losing the client. It is ZooKeeper's own liveness, which elections do
	// not use; a store without its session for that long opens a new one
	// (see the package documentation). Default 10s.
	SessionTimeout time.Duration

	// DialTimeout bounds Open: the TCP connections, the session handshake
	// and the first round trip. It is also spread over the endpoints as the
	// timeout of each TCP connection attempt. Default 5s.
	DialTimeout time.Duration

	// RequestTimeout bounds every call whose context has no deadline.
	// Default 5s.
	RequestTimeout time.Duration
}

// settings is a validated Config with its defaults applied.
type settings struct {
	endpoints                                   []string
	username, password                          string
	acl                                         []zk.ACL
	tls                                         *tls.Config
	sessionTimeout, dialTimeout, requestTimeout time.Duration
}

// resolve validates c and applies the defaults.
func (c Config) resolve() (settings, error) {
	st := settings{
		username:       c.Username,
		password:       string(c.Password),
		sessionTimeout: c.SessionTimeout,
		dialTimeout:    c.DialTimeout,
		requestTimeout: c.RequestTimeout,
	}
	if err := adapter.CheckEndpoints(errInvalidConfig, c.Endpoints, 0, ""); err != nil {
		return st, err
	}
	st.endpoints = append(st.endpoints, c.Endpoints...)
	if c.Username == "" && c.Password != "" {
		return st, invalid("Username", "Password without Username")
	}
	for _, a := range c.ACL {
		if a.Perms == 0 || a.Perms&^zk.PermAll != 0 {
			return st, invalid("ACL", fmt.Sprintf("%s:%s: permissions %#x are not a set of cdrwa", a.Scheme, aclList{a}.masked()[0].ID, a.Perms))
		}
		if a.Scheme == "auth" && c.Username == "" {
			return st, invalid("ACL", "the auth scheme (the session's identities) needs a Username")
		}
	}
	if c.ACL != nil {
		st.acl = append([]zk.ACL(nil), c.ACL...)
	}
	if c.TLS != nil {
		st.tls = c.TLS.Clone()
	}
	if err := adapter.CheckTimeouts(errInvalidConfig, adapter.Timeout{Field: "SessionTimeout", Value: &st.sessionTimeout, Default: defaultSessionTimeout}); err != nil {
		return st, err
	}
	if err := adapter.CheckDialRequest(errInvalidConfig, &st.dialTimeout, &st.requestTimeout); err != nil {
		return st, err
	}
	if st.sessionTimeout < time.Millisecond {
		return st, invalid("SessionTimeout", fmt.Sprintf("%v: below 1ms", st.sessionTimeout))
	}
	return st, nil
}

// aclList is the type of Config.ACL: a []zk.ACL (any []zk.ACL is assigned
// to it) that fmt, JSON and slog show with the digests masked, where a
// store.Secret, a string, cannot stand.
type aclList []zk.ACL

// masked is l with the digests of its digest entries masked: a digest can
// be guessed offline.
func (l aclList) masked() []zk.ACL {
	if l == nil {
		return nil
	}
	m := slices.Clone([]zk.ACL(l))
	for i, a := range m {
		if user, _, ok := strings.Cut(a.ID, ":"); ok && strings.EqualFold(a.Scheme, "digest") {
			m[i].ID = user + ":" + adapter.Mask
		}
	}
	return m
}

// Format prints l as fmt would a []zk.ACL (every verb), its digests
// masked.
func (l aclList) Format(f fmt.State, verb rune) {
	_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), l.masked())
}

// GoString is %#v of l, its digests masked.
func (l aclList) GoString() string { return fmt.Sprintf("%#v", l.masked()) }

// MarshalJSON encodes l with its digests masked.
func (l aclList) MarshalJSON() ([]byte, error) { return json.Marshal(l.masked()) }

// LogValue is l for log/slog, its digests masked.
func (l aclList) LogValue() slog.Value { return slog.AnyValue(l.masked()) }
