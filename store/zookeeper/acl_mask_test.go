package zookeeper

import (
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// An error about an ACL entry never quotes a digest: it can be guessed
// offline.
func TestACLErrorsMaskDigests(t *testing.T) {
	const secret = "DIGESTSECRET"
	for _, acl := range []string{
		"digest:reader:" + secret + ":rz",
		"digest:reader:" + secret + ":",
		"DIGEST:reader:" + secret + ":x",
		"digest:reader:" + secret + ":extra:r",
		"world:anyone:r,digest:reader:" + secret + ":q",
	} {
		_, err := parseACL(acl)
		if err == nil {
			t.Errorf("parseACL(%q) accepted", acl)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("parseACL(%q): %v", acl, err)
		}
	}
	c := Config{Endpoints: []string{"127.0.0.1:2181"}, ACL: []zk.ACL{{Scheme: "digest", ID: "reader:" + secret, Perms: 0}}}
	if _, err := c.resolve(); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("resolve: %v", err)
	}
}
