package kubernetes_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	_ "github.com/leadership-go/leadership/store/kubernetes" // registers k8s:// with store/open
	"github.com/leadership-go/leadership/store/open"

	lstore "github.com/leadership-go/leadership/store"
)

// TestSchemeRegistered checks that importing the package makes k8s a
// scheme of store/open, whose URLs reach the package's URL parser.
func TestSchemeRegistered(t *testing.T) {
	if !slices.Contains(open.Schemes, "k8s") {
		t.Fatalf("open.Schemes %v lacks k8s", open.Schemes)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		raw    string
		badURL bool
	}{
		{"k8s://Not_A_Label", true},
		{"k8s://default?nosuch=1", true},
		{"k8s://default/path", true},
		{"k8s://default?kubeconfig=" + filepath.Join(t.TempDir(), "none"), true},
	} {
		kv, err := open.Store(ctx, tc.raw)
		var ce *lstore.ConfigError
		if kv != nil || !errors.As(err, &ce) || !errors.Is(err, lstore.ErrInvalidConfig) || errors.Is(err, open.ErrUnknownScheme) ||
			errors.Is(err, open.ErrInvalidURL) != tc.badURL {
			t.Errorf("%s: %v, %v; want a *store.ConfigError, matching open.ErrInvalidURL: %v", tc.raw, kv, err, tc.badURL)
		}
	}
	// An unreachable server is no mistake in the URL.
	kubeconfig := filepath.Join(t.TempDir(), "config")
	text := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\", insecure-skip-tls-verify: true}\n" +
		"users:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		raw    string
		badURL bool
	}{
		{"k8s://default?dial_timeout=2s&kubeconfig=" + url.QueryEscape(kubeconfig), false},
		{"k8s://default?context=nosuch&kubeconfig=" + url.QueryEscape(kubeconfig), true},
	} {
		kv, err := open.Store(ctx, tc.raw)
		if kv != nil || err == nil || errors.Is(err, open.ErrInvalidURL) != tc.badURL {
			t.Errorf("%s: %v, %v; want an error matching open.ErrInvalidURL: %v", tc.raw, kv, err, tc.badURL)
		}
	}
}

// TestOpenByURL opens the test server's namespace by URL and makes a
// round trip (skipped without a server: scripts/servers.sh start kube).
func TestOpenByURL(t *testing.T) {
	kubeconfig := os.Getenv("LEADERSHIP_KUBECONFIG_ADMIN")
	ns := os.Getenv("LEADERSHIP_KUBE_NAMESPACE")
	if kubeconfig == "" || ns == "" {
		t.Skip("needs a running kube-apiserver: scripts/servers.sh start kube && eval \"$(scripts/servers.sh env)\"")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv, err := open.Store(ctx, "k8s://"+ns+"?kubeconfig="+url.QueryEscape(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	key := "register-test-" + time.Now().Format("150405.000000")
	ok, pair, err := kv.AtomicPut(ctx, key, []byte("v"), nil, nil)
	if err != nil || !ok {
		t.Fatalf("AtomicPut: %v %v", ok, err)
	}
	got, err := kv.Get(ctx, key, nil)
	if err != nil || string(got.Value) != "v" {
		t.Fatalf("Get: %v %v", got, err)
	}
	if ok, err := kv.AtomicDelete(ctx, key, pair); err != nil || !ok {
		t.Fatalf("AtomicDelete: %v %v", ok, err)
	}
}
