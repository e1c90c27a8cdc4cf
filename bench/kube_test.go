package main

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// The k8s row comes from the kube server's environment, with the admin's
// kubeconfig.
func TestKubeURLFromEnv(t *testing.T) {
	t.Setenv(kubeNamespaceEnv, "")
	t.Setenv(kubeKubeconfigEnv, "/state/kube/kubeconfig-admin")
	if u := kubeURL(); u != "" {
		t.Fatalf("no namespace: %q", u)
	}
	t.Setenv(kubeNamespaceEnv, "leadership")
	if u, want := kubeURL(), "k8s://leadership?kubeconfig=%2Fstate%2Fkube%2Fkubeconfig-admin"; u != want {
		t.Fatalf("kubeURL() = %q, want %q", u, want)
	}
	cfg, err := parseFlags([]string{"--backends", "k8s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.backends) != 1 || cfg.backends[0].name != "k8s" || cfg.backends[0].scheme != "k8s" {
		t.Fatalf("backends %+v", cfg.backends)
	}
	if got := maskURL(cfg.backends[0].url); got != "k8s://leadership?kubeconfig=%2Fstate%2Fkube%2Fkubeconfig-admin" {
		t.Fatalf("masked URL %q", got)
	}
	t.Setenv(kubeKubeconfigEnv, "")
	if u := kubeURL(); u != "k8s://leadership" {
		t.Fatalf("without a kubeconfig: %q", u)
	}
}

// A forwarded k8s:// client gets a kubeconfig of its one context whose
// server is the forwarder, keeping the server's name for TLS, and the
// kubeconfig is gone once done is called.
func TestKubeForwardURL(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:23443
    certificate-authority: ca.crt
- name: other
  cluster:
    server: https://10.0.0.1:6443
users:
- name: u
  user:
    token: secret
contexts:
- name: ctx
  context:
    cluster: c
    user: u
    namespace: leadership
- name: other
  context:
    cluster: other
    user: u
current-context: other
`
	if err := os.WriteFile(src, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := "k8s://leadership?" + url.Values{"kubeconfig": {src}, "context": {"ctx"}, "request_timeout": {"3s"}}.Encode()
	fu, fwds, done, err := forwardURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	defer closeForwarders(fwds)
	if len(fwds) != 1 || fwds[0].Target() != "127.0.0.1:23443" {
		t.Fatalf("forwarders %v", fwds)
	}
	u, err := url.Parse(fu)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Scheme != "k8s" || u.Host != "leadership" || q.Get("context") != "ctx" || q.Get("request_timeout") != "3s" {
		t.Fatalf("forwarded URL %q", fu)
	}
	written := q.Get("kubeconfig")
	if fi, err := os.Stat(written); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("written kubeconfig %s: %v %v", written, fi, err)
	}
	got, err := clientcmd.LoadFromFile(written)
	if err != nil {
		t.Fatal(err)
	}
	c := got.Clusters["c"]
	if c == nil || c.Server != "https://"+fwds[0].Addr() || c.TLSServerName != "127.0.0.1" ||
		c.CertificateAuthority != filepath.Join(dir, "ca.crt") {
		t.Fatalf("cluster %+v", c)
	}
	if names := slices.Sorted(maps.Keys(got.Clusters)); len(names) != 1 || got.CurrentContext != "ctx" || got.AuthInfos["u"] == nil || got.AuthInfos["u"].Token != "secret" {
		t.Fatalf("clusters %v, current context %q, users %v", names, got.CurrentContext, got.AuthInfos)
	}
	done()
	if _, err := os.Stat(written); !os.IsNotExist(err) {
		t.Fatalf("kubeconfig left after done: %v", err)
	}

	if _, _, _, err := forwardURL("k8s://leadership?" + url.Values{"kubeconfig": {src}, "context": {"none"}}.Encode()); err == nil {
		t.Fatal("an unknown context accepted")
	}
}
