package kubernetes

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
)

// The password of the tests below, and its escaped form in URLs.
const (
	secret    = "S3cretPW"
	slashed   = "S3cr/etPW" // a password with a character URLs escape
	slashedIn = "S3cr%2FetPW"
)

// noSecret fails when s shows a password of the tests, as given, decoded,
// percent-encoded, or base64-encoded (as in a basic-auth header).
func noSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range []string{secret, slashed} {
		for _, form := range []string{sec, url.QueryEscape(sec), url.PathEscape(sec),
			base64.StdEncoding.EncodeToString([]byte(sec)), base64.StdEncoding.EncodeToString([]byte("admin:" + sec))} {
			if strings.Contains(s, form) {
				t.Errorf("%s shows the password (as %q): %s", what, form, s)
			}
		}
	}
}

// kubeconfigWith writes a kubeconfig whose cluster has the given server
// and proxy-url (none if ""), and returns its path.
func kubeconfigWith(t *testing.T, server, proxy string) string {
	t.Helper()
	cluster := fmt.Sprintf("{server: %q, insecure-skip-tls-verify: true}", server)
	if proxy != "" {
		cluster = fmt.Sprintf("{server: %q, proxy-url: %q, insecure-skip-tls-verify: true}", server, proxy)
	}
	text := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: ` + cluster + `
users:
- name: u
  user: {token: tok}
contexts:
- name: x
  context: {cluster: c, user: u, namespace: default}
current-context: x
`
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// KubeconfigsWithPasswords are server (and proxy) URLs of a kubeconfig
// that carry a password: well formed but unreachable, typo'd, a bad port,
// a malformed escape, no scheme, and a malformed proxy-url.
var kubeconfigsWithPasswords = []struct{ name, server, proxy string }{
	{"unreachable", "https://admin:" + secret + "@127.0.0.1:1", ""},
	{"unreachable escaped", "https://admin:" + slashedIn + "@127.0.0.1:1", ""},
	{"typo'd address", "https://admin:" + secret + "@[127.0.0.1", ""},
	{"typo'd escaped", "https://admin:" + slashedIn + "@[127.0.0.1", ""},
	{"bad port", "https://admin:" + secret + "@127.0.0.1:99999", ""},
	{"port not a number", "https://admin:" + secret + "@127.0.0.1:x", ""},
	{"malformed escape", "https://admin:" + secret + "%zz@127.0.0.1:1", ""},
	{"no scheme", "admin:" + secret + "@[127.0.0.1", ""},
	{"no @", "https://admin:" + secret + "/127.0.0.1:1", ""},
	{"proxy", "https://127.0.0.1:1", "http://proxy:" + secret + "@[127.0.0.1"},
	{"proxy reachable form", "https://127.0.0.1:1", "http://proxy:" + secret + "@127.0.0.1:1"},
}

// TestOpenErrorMasksServerPassword checks that a password in the
// kubeconfig's server or proxy URL (https://user:password@host, which a
// kubeconfig allows) is in none of Open's errors: a server that cannot be
// reached, and URLs that client-go cannot parse, whose errors quote them
// (issue 32).
func TestOpenErrorMasksServerPassword(t *testing.T) {
	for _, tc := range kubeconfigsWithPasswords {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := kubeconfigWith(t, tc.server, tc.proxy)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := Open(ctx, Config{Kubeconfig: kubeconfig, DialTimeout: 2 * time.Second})
			if err == nil {
				s.Close()
				t.Fatal("opened a store on a closed port")
			}
			noSecret(t, "Open's error", err.Error())
			noSecret(t, "Open's error %+v", fmt.Sprintf("%+v", err))
			noSecret(t, "Open's error %#v", fmt.Sprintf("%#v", err))
			t.Log(err)
		})
	}
}

// MalformedURLsWithPasswords are k8s:// URLs that carry a password and
// that url.Parse refuses (its error quotes the URL) or that parseURL
// refuses.
var malformedURLsWithPasswords = []string{
	"k8s://user:" + secret + "@%zz/ns",
	"k8s://user:" + secret + "@[::1/ns",
	"k8s://user:" + secret + "@ns:99999",
	"k8s://user:" + secret + "@ns:port",
	"k8s://user:" + secret + "/ns",
	"k8s://user:" + secret + "%zz@ns",
	"k8s://user:" + secret + "@ns",
	"k8s://user:" + slashedIn + "@ns bad",
	"k8s://user:" + slashedIn + "@[::1/ns",
	"k8s://user:" + secret + "@ns\x7f",
	"k8s://ns?password=" + secret,
}

// TestParseURLErrorMasksPassword checks that a malformed k8s:// URL's
// password is not in parseURL's error (url.Parse's quotes the URL).
func TestParseURLErrorMasksPassword(t *testing.T) {
	for _, raw := range malformedURLsWithPasswords {
		_, err := parseURL(raw)
		if err == nil {
			t.Errorf("parseURL accepted a malformed URL")
			continue
		}
		noSecret(t, "parseURL's error", err.Error())
		noSecret(t, "parseURL's error %+v", fmt.Sprintf("%+v", err))
		t.Log(err)
	}
}
