package adapter

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
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

// URLPassword returns the password of raw's user information
// (scheme://user:password@host, or user:password@host), found by hand so
// that a URL that does not parse (a typo'd host, a malformed %-escape)
// gives it too, for Redact; "" when there is none. In a URL without "@"
// a port that is not a number is taken for a password whose "@host" was
// left out (https://admin:PASSWORD/...).
func URLPassword(raw string) string {
	rest := raw
	if _, after, ok := strings.Cut(raw, "://"); ok {
		rest = after
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		authority := rest
		if end := strings.IndexAny(rest, "/?#"); end >= 0 {
			authority = rest[:end]
		}
		if i := strings.LastIndexByte(authority, ']'); i >= 0 {
			authority = authority[i+1:]
		}
		if _, port, ok := strings.Cut(authority, ":"); ok && strings.Trim(port, "0123456789") != "" {
			return port
		}
		return ""
	}
	_, pass, _ := strings.Cut(rest[:at], ":")
	return pass
}

// Redact returns err with every secret masked in its text: as given, and
// as a URL shows it (percent-encoded, or decoded). It returns err itself
// when its text shows none of them; otherwise an error with the masked
// text only, which unwraps to nothing, as the errors err wraps (such as a
// *url.Error) would show the secret. Classify err before redacting it.
func Redact(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var forms []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		forms = append(forms, s, url.QueryEscape(s), url.PathEscape(s), strings.TrimPrefix(url.UserPassword("", s).String(), ":"))
		if d, derr := url.PathUnescape(s); derr == nil {
			forms = append(forms, d)
		}
	}
	// The longest first: a form that contains another is masked whole.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	masked := msg
	for _, f := range forms {
		if f != "" {
			masked = strings.ReplaceAll(masked, f, Mask)
		}
	}
	if masked == msg {
		return err
	}
	return redacted(masked)
}

// redacted is an error whose text had secrets masked.
type redacted string

func (r redacted) Error() string { return string(r) }

// MaskURLError returns err, an error of url.Parse, without what it
// quotes: the URL (which may hold a password) is shown as MaskDSN shows
// it, and the reason without the part that failed (an invalid port after
// the host is the password of "user:password/..." written without its
// "@"). An error that is not a *url.Error is returned as it is.
func MaskURLError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	var escape url.EscapeError
	var host url.InvalidHostError
	reason := ue.Err.Error()
	switch {
	case errors.As(ue.Err, &escape):
		reason = "a malformed %-escape"
	case errors.As(ue.Err, &host):
		reason = "an invalid character in the host"
	case strings.HasPrefix(reason, "invalid port"):
		reason = "an invalid port after the host"
	case strings.ContainsAny(reason, `"'`+"`"):
		reason = "malformed"
	}
	return &url.Error{Op: ue.Op, URL: MaskDSN(ue.URL), Err: errors.New(reason)}
}
