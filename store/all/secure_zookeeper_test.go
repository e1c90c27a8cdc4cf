package all_test

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/open"
)

// TestSecureZookeeper runs the secured suite over scripts/secure/zookeeper.sh's
// server: TLS only, client certificates required, digest identities, the
// election's znodes created with an ACL that only the candidate may write
// and the reader may read.
func TestSecureZookeeper(t *testing.T) {
	runSecured(t, securedServer{name: "zookeeper", env: "LEADERSHIP_ZK_SECURE", ttl: 4 * time.Second /* Java TLS under load: 2s leases were lost to starvation */, bad: zookeeperBadConfigs})
}

// zookeeperBadConfigs derives the broken configurations from the
// candidate's and the other identity's URLs.
func zookeeperBadConfigs(t *testing.T, certs string) []badConfig {
	writer, _, other := securedServer{name: "zookeeper", env: "LEADERSHIP_ZK_SECURE"}.urls(t)
	spec, err := open.Parse(writer)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string) string { return filepath.Join(certs, name) }
	wrongPassword := strings.Replace(writer, ":"+url.PathEscape(spec.Password)+"@", ":not-"+url.PathEscape(spec.Password)+"@", 1)
	if wrongPassword == writer {
		t.Fatal("cannot find the password in the candidate's URL")
	}
	return []badConfig{
		{name: "wrong password", url: wrongPassword, write: true,
			want: []string{"authentication failed", "wrong password", `"candidate"`}, secret: spec.Password, kind: lstore.ErrAuth},
		{name: "missing permission", url: other, write: true,
			want: []string{"permission denied", "CREATE", "/secure"}, secret: otherPassword(t, other), kind: lstore.ErrPermission},
		{name: "unknown CA", url: withParams(t, writer, map[string]string{"ca": file("other-ca.crt")}),
			want: []string{"unknown authority"}, secret: spec.Password, kind: lstore.ErrTLS},
		{name: "wrong client certificate", url: withParams(t, writer, map[string]string{"cert": file("other-client.crt"), "key": file("other-client.key")}),
			want: []string{"refused the client certificate", "not trusted"}, secret: spec.Password, kind: lstore.ErrTLS},
		{name: "expired client certificate", url: withParams(t, writer, map[string]string{"cert": file("expired-client.crt"), "key": file("expired-client.key")}),
			want: []string{"refused the client certificate", "expired"}, secret: spec.Password, kind: lstore.ErrTLS},
		{name: "no client certificate", url: withParams(t, writer, map[string]string{"cert": "", "key": ""}),
			want: []string{"without a client certificate|certificate required"}, secret: spec.Password, kind: lstore.ErrTLS},
		{name: "plain text to the TLS port", url: withParams(t, writer, map[string]string{"ca": "", "cert": "", "key": ""}),
			want: []string{"speaks TLS"}, secret: spec.Password, kind: lstore.ErrTLS},
		{name: "ACL without the scheme's id", url: withParams(t, writer, map[string]string{"acl": "digest:reader:r"}),
			want: []string{"acl", "digest id"}, secret: spec.Password, kind: lstore.ErrInvalidConfig},
	}
}

// otherPassword is the password of the other identity's URL.
func otherPassword(t *testing.T, other string) string {
	s, err := open.Parse(other)
	if err != nil {
		t.Fatal(err)
	}
	return s.Password
}
