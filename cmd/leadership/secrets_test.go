package main

import (
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command shows no password of a store URL in its errors: not of a
// malformed k8s:// URL (url.Parse's error quotes it), not of a kubeconfig
// whose server URL holds one, typo'd or unreachable (client-go's errors
// quote it), not of a URL of another backend that lacks its @host (the
// password becomes a port) (issue 32).
func TestCommandErrorsMaskPasswords(t *testing.T) {
	const secret = "S3cretPW"
	var urls []string
	for _, server := range []string{"https://admin:" + secret + "@[127.0.0.1", "https://admin:" + secret + "@127.0.0.1:1", "https://admin:" + secret + "/127.0.0.1:1"} {
		path := filepath.Join(t.TempDir(), "config")
		text := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "` + server + `", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: tok}
contexts:
- name: x
  context: {cluster: c, user: u, namespace: default}
current-context: x
`
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, "k8s://default?dial_timeout=2s&kubeconfig="+url.QueryEscape(path))
	}
	if leftOut["kubernetes"] != "" {
		urls = nil
	}
	urls = append(urls,
		"k8s://user:"+secret+"@%zz/ns",
		"k8s://user:"+secret+"@[::1/ns",
		"k8s://user:"+secret+"@ns:99999",
		"k8s://user:"+secret+"/ns",
		"etcd://user:"+secret,
		"redis://:"+secret+"/0",
		"postgres://user:"+secret+"@[::1/db",
		"zk://user:pa:"+secret+"/x",
	)
	for _, raw := range urls {
		for _, cmd := range []string{"status", "end"} {
			code, stdout, stderr := runCLI(t, cmd, "--store", raw, "--key", "k")
			if code == exitOK {
				t.Errorf("%s succeeded on a malformed or unreachable store", cmd)
			}
			for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte("admin:" + secret))} {
				if strings.Contains(stdout+stderr, form) {
					t.Errorf("%s shows the password: exit %d, %s%s", cmd, code, stdout, stderr)
				}
			}
			t.Logf("%s: exit %d: %s", cmd, code, strings.TrimSpace(stderr))
		}
	}
}
