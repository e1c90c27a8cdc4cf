package kubernetes

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// The test server's environment (scripts/servers.sh env, after
// scripts/servers.sh install kube && scripts/servers.sh start kube).
const (
	envServer     = "LEADERSHIP_KUBE_SERVER"    // https://127.0.0.1:PORT
	envNamespace  = "LEADERSHIP_KUBE_NAMESPACE" // the namespace the roles grant
	envKubeconfig = "LEADERSHIP_KUBECONFIG_"    // + ADMIN, CANDIDATE, FOLLOWER, NORIGHTS
	needs         = "a running kube-apiserver (scripts/servers.sh install kube && scripts/servers.sh start kube)"
)

// The identities of the test server (scripts/servers.sh, "kube").
const (
	admin     = "admin"     // system:masters
	candidate = "candidate" // get, list, watch, create, update on leases
	follower  = "follower"  // get, list, watch on leases
	norights  = "norights"  // authenticated, no role
)

// kubeconfigOf is the path of id's kubeconfig.
func kubeconfigOf(t testing.TB, id string) string {
	t.Helper()
	return storetest.Env(t, envKubeconfig+strings.ToUpper(id), needs)
}

// namespace is the test server's namespace.
func namespace(t testing.TB) string {
	t.Helper()
	return storetest.Env(t, envNamespace, needs)
}

// serverAddr is the test server's host:port.
func serverAddr(t testing.TB) string {
	t.Helper()
	u, err := url.Parse(storetest.Env(t, envServer, needs))
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// openAs opens a Store as id, through its kubeconfig, and closes it at
// cleanup.
func openAs(t testing.TB, id string) *Store {
	t.Helper()
	cfg := Config{Kubeconfig: kubeconfigOf(t, id)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open as %s: %v", id, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// restOf is id's client configuration, without client-side rate limit.
func restOf(t testing.TB, id string) *rest.Config {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfigOf(t, id))
	if err != nil {
		t.Fatal(err)
	}
	rc.QPS = -1
	// Its own connections, closed at the end of the test: client-go's
	// shared transports would keep them (and their goroutines) open.
	cs := &conns{timeout: 10 * time.Second}
	rc.Dial = cs.dialContext
	t.Cleanup(cs.closeAll)
	return rc
}

// leasesAs is a client-go Lease client as id, for what the tests check
// beside the Store.
func leasesAs(t testing.TB, id string) coordclient.LeaseInterface {
	t.Helper()
	c, err := coordclient.NewForConfig(restOf(t, id))
	if err != nil {
		t.Fatal(err)
	}
	return c.Leases(namespace(t))
}

// opener opens clients as id at given endpoints (forwarders to the
// server): the conformance suite's.
func opener(t testing.TB, id string) electiontest.OpenFunc {
	base, ns := restOf(t, id), namespace(t)
	base.Dial = nil // Open dials its own
	return func(ctx context.Context, endpoints []string) (store.Store, error) {
		rc := rest.CopyConfig(base)
		rc.Host = "https://" + endpoints[0]
		s, err := Open(ctx, Config{REST: rc, Namespace: ns, DialTimeout: electiontest.OpenBudget})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// uniqueKey is a key no other test, run or process uses.
func uniqueKey(t testing.TB) string { return storetest.TestKey(t, "kube") }

// readableKey is a unique key in the readable form (its Lease has the
// same name, with '.' for '/').
func readableKey(t testing.TB, name string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(storetest.FreshKey("kube", name)))
}

// deleteAtCleanup deletes key's Lease as admin when the test ends.
func deleteAtCleanup(t testing.TB, s *Store, key string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Delete(ctx, key)
	})
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
