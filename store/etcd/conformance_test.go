package etcd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership/leadershiptest"
)

// restartAllowed reports whether tests may stop and start the shared test
// servers (scripts/test.sh allows it: it runs one package at a time).
func restartAllowed() bool { return os.Getenv("LEADERSHIP_RESTART_SERVERS") == "1" }

func network(t *testing.T, env, server string) *leadershiptest.Network {
	eps := os.Getenv(env)
	if eps == "" {
		t.Skipf("%s is not set (scripts/servers.sh starts etcd)", env)
	}
	n := &leadershiptest.Network{
		BackendName: "etcd",
		Endpoints:   strings.Split(eps, ","),
		Open: func(ctx context.Context, endpoints []string) (store.Store, error) {
			return Open(ctx, Config{Endpoints: endpoints})
		},
	}
	if restartAllowed() {
		n.Server = server
	}
	return n
}

func TestConformance(t *testing.T) {
	leadershiptest.Run(t, network(t, "LEADERSHIP_ETCD", "etcd"))
}

// Killing the member that leads etcd's own Raft must not make two leaders,
// and the election must go on.
func TestClusterConsensusLeaderKilled(t *testing.T) {
	n := network(t, "LEADERSHIP_ETCD_CLUSTER", "")
	n.BackendName = "etcd cluster"
	if !restartAllowed() {
		t.Skip("LEADERSHIP_RESTART_SERVERS is not 1: this test kills a member of the shared cluster")
	}
	leadershiptest.RunFailover(t, n,
		func(t *testing.T) { t.Logf("killed etcd member: %s", servers(t, "kill", "etcd-cluster", "leader")) },
		func(t *testing.T) { servers(t, "start", "etcd-cluster") })
}

// servers runs scripts/servers.sh and returns its output.
func servers(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("bash", append([]string{filepath.Join("..", "..", "scripts", "servers.sh")}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("servers.sh %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
