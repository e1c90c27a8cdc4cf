package kubernetes

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/store/internal/storetest"
	"k8s.io/client-go/tools/clientcmd"
)

// inClusterChild marks the process TestInClusterConfiguration starts as a
// pod would be: its own mount namespace, the service account's files at
// the path every pod has them, KUBERNETES_SERVICE_HOST and _PORT set, and
// no kubeconfig.
const inClusterChild = "LEADERSHIP_KUBE_INCLUSTER_CHILD"

// inClusterKey is the key the "pod" writes (the parent deletes it).
const inClusterKey = "LEADERSHIP_KUBE_INCLUSTER_KEY"

// serviceAccountDir is where a pod finds its service account's token, CA
// and namespace (client-go's rest.InClusterConfig reads them there).
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// TestInClusterConfiguration checks that Open, given no kubeconfig (none
// in $KUBECONFIG or ~/.kube), takes the in-cluster configuration of a pod:
// the service account's token and CA, the API server from
// KUBERNETES_SERVICE_HOST and _PORT, and the pod's namespace. It runs this
// test binary as the "pod", in a mount namespace of its own (unshare, as
// root) where the candidate identity's token, the server's CA and the
// test namespace are the service account's files.
func TestInClusterConfiguration(t *testing.T) {
	if os.Getenv(inClusterChild) == "1" {
		inClusterPod(t)
		return
	}
	ns := namespace(t)
	u, err := url.Parse(storetest.Env(t, envServer, needs))
	if err != nil {
		t.Fatal(err)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare(1) for a mount namespace of its own")
	}
	// A machine (a container) may not let even root make mounts.
	if out, err := exec.Command(unshare, "--mount", "--", "sh", "-c", "mount -t tmpfs tmpfs /var/run").CombinedOutput(); err != nil {
		t.Skipf("cannot mount in a mount namespace of its own here: %v: %s", err, out)
	}
	kc, err := clientcmd.LoadFromFile(kubeconfigOf(t, candidate))
	if err != nil {
		t.Fatal(err)
	}
	var token string
	for _, a := range kc.AuthInfos {
		token = a.Token
	}
	ca, err := os.ReadFile(storetest.Env(t, "LEADERSHIP_KUBE_CA", needs))
	if err != nil || token == "" {
		t.Fatalf("the candidate's token (%d bytes) or the server's CA: %v", len(token), err)
	}
	sa := t.TempDir()
	for name, data := range map[string]string{"token": token, "ca.crt": string(ca), "namespace": ns} {
		if err := os.WriteFile(filepath.Join(sa, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir() // no ~/.kube/config
	key := uniqueKey(t)
	deleteAtCleanup(t, openAs(t, admin), key)
	// A tmpfs over /var/run (this namespace's only) holds the directory:
	// nothing is created on the machine's own file systems.
	script := `set -e
mount --make-rprivate /
mount -t tmpfs tmpfs /var/run
mkdir -p ` + serviceAccountDir + `
mount --bind "$1" ` + serviceAccountDir + `
shift
exec "$@"`
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, "--mount", "--", "sh", "-c", script, "sh", sa,
		exe, "-test.run", "^TestInClusterConfiguration$", "-test.v")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, inClusterChild+"=1", inClusterKey+"="+key, "HOME="+home,
		"KUBERNETES_SERVICE_HOST="+u.Hostname(), "KUBERNETES_SERVICE_PORT="+u.Port())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "in-cluster: namespace "+ns) {
		t.Fatalf("the pod: %v\n%s", err, out)
	}
}

// inClusterPod is the child's side: the zero Config opens the pod's
// namespace as its service account, which may read and write Leases.
func inClusterPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, Config{})
	if err != nil {
		t.Fatalf("Open with the in-cluster configuration: %v", err)
	}
	defer s.Close()
	key := os.Getenv(inClusterKey)
	ok, _, err := s.AtomicPut(ctx, key, []byte("v"), nil, nil)
	if err != nil || !ok {
		t.Fatalf("AtomicPut as the service account: %v %v", ok, err)
	}
	if _, err := s.Get(ctx, key, nil); err != nil && !errors.Is(err, store.ErrKeyNotFound) {
		t.Fatalf("Get: %v", err)
	}
	t.Logf("in-cluster: namespace %s", s.ns)
}
