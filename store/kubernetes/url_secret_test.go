package kubernetes_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leadership-go/leadership/store/open"
)

const secret = "S3cretPW"

// noSecret fails when s shows the password, as given, percent-encoded or
// base64-encoded.
func noSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, form := range []string{secret, url.QueryEscape(secret), base64.StdEncoding.EncodeToString([]byte("admin:" + secret))} {
		if strings.Contains(s, form) {
			t.Errorf("%s shows the password: %s", what, s)
		}
	}
}

// TestOpenErrorsMaskPasswords: open.Parse and open.Store of a k8s:// URL
// show no password, neither one in a malformed URL (which url.Parse's
// error quotes) nor one in the server URL of the kubeconfig it names,
// typo'd or unreachable (whose client-go errors quote it) (issue 32).
func TestOpenErrorsMaskPasswords(t *testing.T) {
	urls := []string{
		"k8s://user:" + secret + "@%zz/ns",
		"k8s://user:" + secret + "@[::1/ns",
		"k8s://user:" + secret + "@ns:99999",
		"k8s://user:" + secret + "@ns:port",
		"k8s://user:" + secret + "/ns",
		"k8s://user:" + secret + "%zz@ns",
		"k8s://user:" + secret + "@ns",
	}
	for _, server := range []string{"https://admin:" + secret + "@[127.0.0.1", "https://admin:" + secret + "@127.0.0.1:1", "https://admin:" + secret + "@127.0.0.1:99999"} {
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
	for _, raw := range urls {
		if spec, err := open.Parse(raw); err != nil {
			noSecret(t, "open.Parse's error", err.Error())
		} else {
			noSecret(t, "open.Parse's Spec", spec.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		kv, err := open.Store(ctx, raw)
		cancel()
		if err == nil {
			kv.Close()
			t.Errorf("opened %s", raw)
			continue
		}
		noSecret(t, "open.Store's error", err.Error())
		noSecret(t, "open.Store's error %+v", fmt.Sprintf("%+v", err))
		t.Log(err)
	}
}
