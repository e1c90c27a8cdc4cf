package adapter

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces a secret wherever one would be shown.
const Mask = "xxxxx"

// secretWords is THE list of what makes a URL or DSN parameter a
// credential, for every backend: a parameter whose lower-cased name
// contains one of them has its value masked wherever a URL, a DSN or a
// Config is shown (password, pass, sslpassword of PostgreSQL's encrypted
// client key, passfile, token of Consul, secret, pwd, credentials, ...).
var secretWords = []string{"pass", "pwd", "token", "secret", "credential", "auth"}

// SecretParam reports whether the URL or DSN parameter name carries a
// credential (see secretWords).
func SecretParam(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// MaskParams returns q with the values of its credential parameters
// masked.
func MaskParams(q url.Values) url.Values {
	out := make(url.Values, len(q))
	for k, v := range q {
		if SecretParam(k) {
			out[k] = []string{Mask}
		} else {
			out[k] = v
		}
	}
	return out
}

// kvPair is one keyword=value of a libpq key/value DSN.
var kvPair = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)

// MaskDSN returns dsn, a URL (scheme://...) or a libpq key/value DSN, with
// its password and credential parameters masked. A URL that does not
// parse is shown as its scheme only: its user information, query or path
// could all hold part of a secret.
func MaskDSN(dsn string) string {
	if dsn == "" {
		return ""
	}
	if scheme, _, ok := strings.Cut(dsn, "://"); ok {
		u, err := url.Parse(dsn)
		if err != nil {
			return scheme + "://(malformed URL, not shown)"
		}
		if _, set := u.User.Password(); set {
			u.User = url.UserPassword(u.User.Username(), Mask)
		}
		if u.RawQuery != "" {
			u.RawQuery = MaskParams(u.Query()).Encode()
		}
		u.Fragment, u.RawFragment = "", ""
		return u.String()
	}
	return kvPair.ReplaceAllStringFunc(dsn, func(m string) string {
		sub := kvPair.FindStringSubmatch(m)
		if SecretParam(sub[1]) {
			return sub[1] + sub[2] + Mask
		}
		return m
	})
}

// FormatMasked writes v as fmt would under f and verb. v is a copy of a
// value whose secrets are masked, converted to a type without methods
// named shadow (such as "redis.configNoMethods"); %#v shows it as real
// (such as "redis.Config"). A Config's Format method calls it, so that
// %v, %+v, %#v and %s never show a secret.
func FormatMasked(f fmt.State, verb rune, v any, shadow, real string) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), v)
	if f.Flag('#') {
		s = strings.ReplaceAll(s, shadow, real)
	}
	_, _ = io.WriteString(f, s)
}

// MaskString is Mask for a secret that is set, "" for one that is not.
func MaskString(secret string) string {
	if secret == "" {
		return ""
	}
	return Mask
}
