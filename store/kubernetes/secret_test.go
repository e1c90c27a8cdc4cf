package kubernetes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenErrorMasksServerPassword checks that a password in the
// kubeconfig's server URL (https://user:password@host) is not in Open's
// error when the server cannot be reached.
func TestOpenErrorMasksServerPassword(t *testing.T) {
	const secret = "S3cretPW"
	kubeconfig := filepath.Join(t.TempDir(), "config")
	text := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://admin:` + secret + `@127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: tok}
contexts:
- name: x
  context: {cluster: c, user: u, namespace: default}
current-context: x
`
	if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, Config{Kubeconfig: kubeconfig, DialTimeout: 2 * time.Second})
	if err == nil {
		s.Close()
		t.Fatal("opened a store on a closed port")
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error shows the password: %v", err)
	}
	t.Log(err)
}
