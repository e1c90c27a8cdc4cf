package storetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// HangBound is how long a call that should end by a timeout of a second or
// less may take before a test calls it hung: generous, since the machine
// running the tests may be loaded. Tests log the time taken.
const HangBound = 10 * time.Second

// Env returns the value of the environment variable name, or skips the
// test, saying that it needs what (for instance "a running etcd
// (scripts/servers.sh start etcd)").
func Env(t testing.TB, name, what string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("%s is not set: this test needs %s; eval \"$(scripts/servers.sh env)\" sets it", name, what)
	}
	return v
}

// Endpoints returns the comma-separated endpoints in the environment
// variable name, or skips the test as Env does.
func Endpoints(t testing.TB, name, what string) []string {
	t.Helper()
	return strings.Split(Env(t, name, what), ",")
}

// RestartAllowed reports whether tests may stop and start the shared test
// servers: LEADERSHIP_RESTART_SERVERS is 1 (scripts/test.sh sets it, as it
// runs one package at a time).
func RestartAllowed() bool { return os.Getenv("LEADERSHIP_RESTART_SERVERS") == "1" }

// ServersScript runs the repository's scripts/servers.sh with args and
// returns its output, trimmed; it fails the test if the script fails.
func ServersScript(t testing.TB, args ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "servers.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("servers.sh %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// OpenStore opens a store with open, under a 30s deadline, as a separate
// process would, failing the test if it cannot; the store is closed at
// cleanup, and a failing Close fails the test. what names the store in
// messages.
func OpenStore(t testing.TB, what string, open func(ctx context.Context) (store.Store, error)) store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := open(ctx)
	if err != nil {
		t.Fatalf("Open(%s): %v", what, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
