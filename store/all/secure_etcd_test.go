package all_test

import (
	"strings"
	"testing"
	"time"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// TestSecureEtcd runs the secured checks on etcd-secure (scripts/secure/etcd.sh):
// TLS with client certificates required, etcd's auth enabled, a candidate
// with read and write rights on the test prefixes only and a follower with
// read rights only (each authenticated by its client certificate's CN), and
// a user without any role (a password, which takes precedence over its
// certificate's CN).
func TestSecureEtcd(t *testing.T) {
	runSecured(t, securedServer{
		name: "etcd",
		env:  "LEADERSHIP_ETCD_SECURE",
		ttl:  2 * time.Second,
		bad:  etcdBadConfigs,
	})
}

// etcdBadConfigs derives the broken configurations from the candidate's
// and the other identity's URLs.
func etcdBadConfigs(t *testing.T, certs string) []badConfig {
	writer, _, other := securedServer{env: "LEADERSHIP_ETCD_SECURE"}.urls(t)
	secret := func(raw string) string {
		spec, err := open.Parse(raw)
		if err != nil || spec.Password == "" {
			t.Fatalf("%s: want a URL with a password", redact(raw))
		}
		return spec.Password
	}
	password := func(raw, pw string) string {
		return strings.Replace(raw, ":"+secret(raw)+"@", ":"+pw+"@", 1)
	}
	const wrongPassword = "Wr0ngPassw0rdXyz"
	return []badConfig{
		{
			name: "unknown CA",
			url:  withParams(t, writer, map[string]string{"ca": certs + "/other-ca.crt"}),
			want: []string{"certificate signed by unknown authority"},
			kind: lstore.ErrTLS,
		},
		{
			name: "wrong client certificate",
			url:  withParams(t, writer, map[string]string{"cert": certs + "/other-client.crt", "key": certs + "/other-client.key"}),
			want: []string{"client certificate", "bad certificate|unknown certificate authority"},
			kind: lstore.ErrTLS,
		},
		{
			name: "expired client certificate",
			url:  withParams(t, writer, map[string]string{"cert": certs + "/expired-client.crt", "key": certs + "/expired-client.key"}),
			want: []string{"client certificate", "expired"},
			kind: lstore.ErrTLS,
		},
		{
			name: "no client certificate",
			url:  withParams(t, writer, map[string]string{"cert": "", "key": ""}),
			want: []string{"client certificate"},
			kind: lstore.ErrTLS,
		},
		{
			name:   "wrong password",
			url:    password(other, wrongPassword),
			want:   []string{"authentication failed", "password"},
			secret: wrongPassword,
			kind:   lstore.ErrAuth,
		},
		{
			name:   "missing permission",
			url:    other,
			want:   []string{"permission denied"},
			secret: secret(other),
			kind:   lstore.ErrPermission,
		},
		{
			name:   "plain text asked of a TLS server",
			url:    withParams(t, password(other, wrongPassword), map[string]string{"ca": "", "cert": "", "key": ""}),
			want:   []string{"speaks TLS"},
			secret: wrongPassword,
			kind:   lstore.ErrTLS,
		},
	}
}
