package open

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// Spec is a parsed store URL:
//
//	scheme://[user[:password]@]host:port[,host:port...][/path][?param=value&...]
//
// Several hosts are separated by commas, which net/url does not accept, so
// the URL is split by hand before its parts are decoded.
type Spec struct {
	Scheme    string     // lower case
	Endpoints []string   // host:port, in order
	Username  string     // decoded
	Password  string     // decoded; never printed
	HasAuth   bool       // user info was given
	Path      string     // without the leading "/", decoded
	Params    url.Values // query parameters
	raw       string     // the URL as given, for backends that take it whole
	read      *params    // the parameters a backend's Opener has read (see Param)
}

// String returns the URL with any password or token masked (the user
// information of consul://TOKEN@host is the ACL token, and every parameter
// that carries a credential, by adapter.SecretParam's one list, such as
// password, token or PostgreSQL's sslpassword).
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Scheme + "://")
	if s.HasAuth {
		if s.Scheme == "consul" && s.Password == "" && s.Username != "" {
			b.WriteString("xxxxx") // consul://TOKEN@host: the user is the ACL token
		} else {
			b.WriteString(url.User(s.Username).String())
		}
		if s.Password != "" {
			b.WriteString(":xxxxx")
		}
		b.WriteString("@")
	}
	b.WriteString(shownEndpoints(strings.Join(s.Endpoints, ",")))
	if s.Path != "" {
		b.WriteString("/" + s.Path)
	}
	if len(s.Params) > 0 {
		q := url.Values{}
		for k, v := range s.Params {
			switch {
			case adapter.SecretParam(k):
				q[k] = []string{adapter.Mask}
			case strings.EqualFold(k, "acl"):
				q[k] = maskDigests(v)
			default:
				q[k] = v
			}
		}
		b.WriteString("?" + q.Encode())
	}
	return b.String()
}

// Format prints s as String does for %v, %+v and %s, quoted for %q, and
// as GoString for %#v: never its password, token or secret parameters.
func (s Spec) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		_, _ = io.WriteString(f, s.GoString())
	case verb == 'q':
		_, _ = fmt.Fprintf(f, "%q", s.String())
	default:
		_, _ = io.WriteString(f, s.String())
	}
}

// GoString is %#v of s, its secrets masked.
func (s Spec) GoString() string {
	m := s.masked()
	return fmt.Sprintf("open.Spec{Scheme:%q, Endpoints:%#v, Username:%q, Password:%q, HasAuth:%v, Path:%q, Params:%#v}",
		m.Scheme, m.Endpoints, m.Username, m.Password, m.HasAuth, m.Path, m.Params)
}

// specJSON is Spec's JSON form.
type specJSON struct {
	Scheme    string
	Endpoints []string
	Username  string
	Password  string `json:",omitempty"`
	HasAuth   bool
	Path      string
	Params    url.Values
	URL       string // String()
}

// masked is s with its secrets masked (and no raw URL).
func (s Spec) masked() specJSON {
	var eps []string
	if s.Endpoints != nil {
		eps = strings.Split(shownEndpoints(strings.Join(s.Endpoints, ",")), ",")
	}
	m := specJSON{Scheme: s.Scheme, Endpoints: eps, Username: s.Username, Password: adapter.MaskString(s.Password),
		HasAuth: s.HasAuth, Path: s.Path, URL: s.String()}
	if s.Scheme == "consul" && s.Password == "" && s.Username != "" {
		m.Username = adapter.Mask // the ACL token
	}
	if len(s.Params) > 0 {
		m.Params = adapter.MaskParams(s.Params)
		if acl, ok := m.Params["acl"]; ok {
			m.Params["acl"] = maskDigests(acl)
		}
	}
	return m
}

// MarshalJSON encodes s with its secrets masked.
func (s Spec) MarshalJSON() ([]byte, error) { return json.Marshal(s.masked()) }

// LogValue is s for log/slog: its masked URL.
func (s Spec) LogValue() slog.Value { return slog.StringValue(s.String()) }

// maskDigests masks the password digests of ZooKeeper ACL entries
// ("digest:user:HASH=:crd" becomes "digest:user:xxxxx:crd"): a digest can
// be guessed offline.
func maskDigests(acls []string) []string {
	out := make([]string, len(acls))
	for i, list := range acls {
		entries := strings.Split(list, ",")
		for j, e := range entries {
			parts := strings.Split(e, ":")
			if len(parts) >= 4 && strings.EqualFold(parts[0], "digest") {
				parts[2] = "xxxxx"
				entries[j] = strings.Join(parts, ":")
			}
		}
		out[i] = strings.Join(entries, ",")
	}
	return out
}

// Parse splits a store URL into its parts and checks their form. It does
// not know which parameters a backend takes: Open checks those.
func Parse(raw string) (*Spec, error) {
	s := &Spec{raw: raw}
	scheme, rest, ok := strings.Cut(strings.TrimSpace(raw), "://")
	if !ok || scheme == "" {
		// Nothing of it is shown: it may be all secret.
		return nil, &ConfigError{Invalid: storeURL{}, Field: "scheme", Reason: `missing: expected scheme://hosts, as in "etcd://127.0.0.1:2379"`, Err: ErrUnknownScheme}
	}
	s.Scheme = strings.ToLower(scheme)
	// The user information ends at the last "@" before the hosts: an "@"
	// after a "/" or "?" means that a password (or token) holds an
	// unescaped "/" or "?" (base64 passwords do), and splitting there would
	// make part of it a host, a port or a path, shown in errors and dialed.
	if cut := strings.IndexAny(rest, "/?"); cut >= 0 && strings.IndexByte(rest[cut:], '@') >= 0 {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "user", Reason: `an "@" after a "/" or "?": percent-encode "/", "?" and "@" in the user name, password or token (%2F, %3F, %40), and "@" in a path or parameter (%40)`}
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		params, err := url.ParseQuery(rest[q+1:])
		if err != nil {
			return nil, &ConfigError{Invalid: storeURL{}, Field: "query", Reason: "cannot be decoded (a malformed %-escape?)"}
		}
		s.Params, rest = params, rest[:q]
	} else {
		s.Params = url.Values{}
	}
	if slash := strings.IndexByte(rest, '/'); slash >= 0 {
		p, err := url.PathUnescape(rest[slash+1:])
		if err != nil {
			return nil, &ConfigError{Invalid: storeURL{}, Field: "path", Reason: "cannot be decoded (a malformed %-escape?)"}
		}
		s.Path, rest = strings.Trim(p, "/"), rest[:slash]
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		s.HasAuth = true
		user, pass, _ := strings.Cut(rest[:at], ":")
		var err error
		if s.Username, err = url.PathUnescape(user); err != nil {
			// Not shown: consul://TOKEN@host puts the token there.
			return nil, &ConfigError{Invalid: storeURL{}, Field: "user", Reason: "cannot be decoded (a malformed %-escape?)"}
		}
		if s.Password, err = url.PathUnescape(pass); err != nil {
			return nil, &ConfigError{Invalid: storeURL{}, Field: "password", Reason: "cannot be decoded"}
		}
		rest = rest[at+1:]
	}
	if rest != "" {
		for _, h := range strings.Split(rest, ",") {
			if h == "" {
				return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Value: shownEndpoints(rest), Reason: "empty host in the list"}
			}
			s.Endpoints = append(s.Endpoints, h)
		}
	}
	return s, nil
}

// HostPorts checks that every endpoint is host:port, adding defaultPort to
// those without one, for a backend's Opener (see Register).
func (s *Spec) HostPorts(defaultPort string) ([]string, error) {
	if len(s.Endpoints) == 0 {
		return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Reason: "no host given"}
	}
	out := make([]string, 0, len(s.Endpoints))
	for _, e := range s.Endpoints {
		if err := checkBrackets(e); err != nil {
			return nil, err
		}
		host, port, err := net.SplitHostPort(e)
		if err != nil {
			if defaultPort == "" || strings.Count(e, ":") > 0 && !strings.HasPrefix(e, "[") {
				// net's error quotes e, which may be a password.
				reason := "want host:port"
				var ae *net.AddrError
				if errors.As(err, &ae) {
					reason += " (" + ae.Err + ")"
				}
				return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Value: shownEndpoint(e), Reason: reason}
			}
			host, port = strings.Trim(e, "[]"), defaultPort
		}
		if host == "" {
			return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Value: shownEndpoint(e), Reason: "empty host name"}
		}
		if strings.ContainsAny(host, " \t[]/\\?#@%") {
			return nil, &ConfigError{Invalid: storeURL{}, Field: "host", Value: shownEndpoint(e), Reason: "not a host name or IP address"}
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, &ConfigError{Invalid: storeURL{}, Field: "port", Value: shownPort(port), Reason: "not a port number (1-65535)"}
		}
		out = append(out, net.JoinHostPort(host, port))
	}
	return out, nil
}

// shownEndpoint is the endpoint e as errors and String show it: a port
// that is not a number is masked, as an endpoint with no "@" before it may
// be the user and password of a URL that lacks its "@host"
// (etcd://user:PASSWORD, redis://:PASSWORD/0).
func shownEndpoint(e string) string {
	cut := strings.IndexByte(e, ':')
	if end := strings.IndexByte(e, ']'); strings.HasPrefix(e, "[") && end >= 0 {
		if cut = strings.IndexByte(e[end:], ':'); cut >= 0 {
			cut += end
		}
	}
	if cut < 0 {
		return e
	}
	return e[:cut+1] + shownPort(e[cut+1:])
}

// shownEndpoints is shownEndpoint of each endpoint of a comma-separated
// list.
func shownEndpoints(list string) string {
	eps := strings.Split(list, ",")
	for i, e := range eps {
		eps[i] = shownEndpoint(e)
	}
	return strings.Join(eps, ",")
}

// shownPort is port, or the mask when it is not digits (see shownEndpoint).
func shownPort(port string) string {
	if strings.Trim(port, "0123456789") == "" {
		return port
	}
	return adapter.Mask
}

// checkBrackets refuses an endpoint whose IPv6 brackets do not pair up:
// "[::1]:2379" and "[::1]" are fine, "[127.0.0.1" and "::1]:2379" are not.
func checkBrackets(e string) error {
	open, close := strings.Count(e, "["), strings.Count(e, "]")
	if open == 0 && close == 0 {
		return nil
	}
	end := strings.IndexByte(e, ']')
	if open != 1 || close != 1 || e[0] != '[' || end < 2 || (end != len(e)-1 && e[end+1] != ':') {
		return &ConfigError{Invalid: storeURL{}, Field: "host", Value: shownEndpoint(e), Reason: "unbalanced brackets: an IPv6 address is written [addr] or [addr]:port"}
	}
	return nil
}

// reader returns the reader of s's parameters, made at the first use.
func (s *Spec) reader() *params {
	if s.read == nil {
		s.read = newParams(s.Params)
	}
	return s.read
}

// Param returns the query parameter name ("" when absent) and marks it
// read, for a backend's Opener: Check reports any parameter nothing read.
func (s *Spec) Param(name string) string { return s.reader().str(name) }

// Duration returns the query parameter name as a positive duration such
// as 5s (0 when absent) and marks it read; a malformed one is reported by
// Check.
func (s *Spec) Duration(name string) time.Duration { return s.reader().duration(name) }

// TLS returns the TLS configuration the URL's parameters ask for (tls=true,
// ca=FILE, cert=FILE&key=FILE, server_name=NAME), or nil when none is
// given, and marks them read; a file that cannot be loaded is reported by
// Check. The server is always verified.
func (s *Spec) TLS() *tls.Config { return tlsConfig(s.reader()) }

// DSN returns the URL Parse was given, its query reduced to the
// parameters nothing has read yet, and marks those read: for a backend
// whose driver takes the URL itself once the backend has read its own
// parameters (PostgreSQL's: the rest are pgx's). It holds the password:
// never show it.
func (s *Spec) DSN() string {
	p, rest := s.reader(), url.Values{}
	for k, v := range s.Params {
		if !p.used[k] {
			rest[k], p.used[k] = v, true
		}
	}
	dsn, _, _ := strings.Cut(strings.TrimSpace(s.raw), "?")
	if enc := rest.Encode(); enc != "" {
		dsn += "?" + enc
	}
	return dsn
}

// Check returns the first error met reading the parameters, or a
// *ConfigError naming one that nothing read: a backend's Opener calls it
// once it has read every parameter it knows, before any network activity.
func (s *Spec) Check() error { return s.reader().done() }

// Invalid returns a *ConfigError about field of this URL, matching
// ErrInvalidURL and err (which may be nil), for a backend's Opener. value
// is shown: never pass a secret.
func (s *Spec) Invalid(field, value, reason string, err error) error {
	return &ConfigError{Invalid: storeURL{}, Field: field, Value: value, Reason: reason, Err: err}
}

// params reads typed query parameters and remembers which were used, so
// that a parameter no backend knows is reported rather than ignored.
type params struct {
	v    url.Values
	used map[string]bool
	err  error
}

func newParams(v url.Values) *params { return &params{v: v, used: map[string]bool{}} }

func (p *params) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

func (p *params) str(name string) string {
	p.used[name] = true
	return p.v.Get(name)
}

func (p *params) boolean(name string) bool {
	p.used[name] = true
	raw := p.v.Get(name)
	if raw == "" {
		return false
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		p.fail(&ConfigError{Invalid: storeURL{}, Field: name, Value: raw, Reason: "not a boolean (true or false)"})
	}
	return b
}

func (p *params) duration(name string) time.Duration {
	p.used[name] = true
	raw := p.v.Get(name)
	if raw == "" {
		return 0
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d <= 0 {
		p.fail(&ConfigError{Invalid: storeURL{}, Field: name, Value: raw, Reason: "not a positive duration such as 5s or 250ms"})
	}
	return d
}

func (p *params) integer(name string) int {
	p.used[name] = true
	raw := p.v.Get(name)
	if raw == "" {
		return 0
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		p.fail(&ConfigError{Invalid: storeURL{}, Field: name, Value: raw, Reason: "not a whole number >= 0"})
	}
	return n
}

// done reports the first error, or a parameter that nothing read.
func (p *params) done() error {
	if p.err != nil {
		return p.err
	}
	for k := range p.v {
		if !p.used[k] {
			return &ConfigError{Invalid: storeURL{}, Field: k, Reason: "unknown parameter for this backend"}
		}
	}
	return nil
}
