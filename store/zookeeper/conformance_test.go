package zookeeper

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

func restartAllowed() bool { return os.Getenv("LEADERSHIP_RESTART_SERVERS") == "1" }

func network(t *testing.T, env, server string) *leadershiptest.Network {
	eps := os.Getenv(env)
	if eps == "" {
		t.Skipf("%s is not set (scripts/servers.sh starts ZooKeeper)", env)
	}
	n := &leadershiptest.Network{
		BackendName: "zookeeper",
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
	leadershiptest.Run(t, network(t, "LEADERSHIP_ZK", "zookeeper"))
}

// Killing the node that leads ZooKeeper's own quorum must not make two
// leaders, and the election must go on.
func TestEnsembleQuorumLeaderKilled(t *testing.T) {
	n := network(t, "LEADERSHIP_ZK_ENSEMBLE", "")
	n.BackendName = "zookeeper ensemble"
	if !restartAllowed() {
		t.Skip("LEADERSHIP_RESTART_SERVERS is not 1: this test kills a node of the shared ensemble")
	}
	leadershiptest.RunFailover(t, n,
		func(t *testing.T) {
			t.Logf("killed zookeeper node: %s", serversScript(t, "kill", "zookeeper-ensemble", "leader"))
		},
		func(t *testing.T) { serversScript(t, "start", "zookeeper-ensemble") })
}

// serversScript runs scripts/servers.sh and returns its output.
func serversScript(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("bash", append([]string{filepath.Join("..", "..", "scripts", "servers.sh")}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("servers.sh %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}
