package storetest_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/memory"
)

var backendSeq atomic.Uint64

// memoryStore opens a handle on the in-process backend name, closed at
// cleanup unless the test closes it.
func memoryStore(t *testing.T, name string) store.Store {
	t.Helper()
	s, err := memory.Open(context.Background(), memory.Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func freshBackend(t *testing.T) string {
	return fmt.Sprintf("%s-%d", t.Name(), backendSeq.Add(1))
}

func TestRefusedAddr(t *testing.T) {
	c, err := net.Dial("tcp", storetest.RefusedAddr(t))
	if err == nil {
		_ = c.Close()
		t.Fatal("a connection to RefusedAddr succeeded")
	}
}

func TestHungServer(t *testing.T) {
	h := storetest.NewHungServer(t)
	c, err := net.Dial("tcp", h.Addr())
	if err != nil {
		t.Fatal(err)
	}
	storetest.WaitFor(t, storetest.Patience, "the connection accepted", func() bool { return h.Accepted() == 1 })
	if n := h.OpenConns(); n != 1 {
		t.Fatalf("OpenConns = %d with one connection open", n)
	}
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("the hung server answered: %d bytes, %v", n, err)
	}
	_ = c.Close()
	storetest.WaitFor(t, storetest.Patience, "the closed connection counted closed", func() bool { return h.OpenConns() == 0 })
}

func TestGatedAddr(t *testing.T) {
	// The target greets every connection.
	target := storetest.ServeAddr(t, func(c net.Conn) {
		_, _ = c.Write([]byte("hi"))
		_ = c.Close()
	})

	addr, release := storetest.GatedAddr(t, target)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, _ := c.Read(make([]byte, 2)); n != 0 {
		t.Fatal("the gate passed data before release")
	}
	release()
	_ = c.SetReadDeadline(time.Now().Add(storetest.Patience))
	got, err := io.ReadAll(c)
	if string(got) != "hi" {
		t.Fatalf("after release: %q, %v", got, err)
	}
}

func TestKeys(t *testing.T) {
	a, b := storetest.FreshKey("x", "leader"), storetest.FreshKey("x", "leader")
	if a == b || !strings.HasPrefix(a, "leadership-test/x-") || !strings.HasSuffix(a, "/leader") {
		t.Fatalf("FreshKey: %q, %q", a, b)
	}
	if d := storetest.Dir(a); strings.Contains(strings.TrimPrefix(d, "leadership-test/"), "/") || d+"/leader" != a {
		t.Fatalf("Dir(%q) = %q", a, d)
	}
	if d := storetest.Dir("flat"); d != "flat" {
		t.Fatalf("Dir(flat) = %q", d)
	}
	if k := storetest.TestKey(t, "y"); !strings.HasSuffix(k, "/TestKeys") {
		t.Fatalf("TestKey = %q", k)
	}
	if ks := storetest.Keys(nil); ks == nil || len(ks) != 0 {
		t.Fatalf("Keys(nil) = %#v", ks)
	}
	if ks := storetest.Keys([]*store.KVPair{{Key: "a"}, {Key: "b"}}); strings.Join(ks, ",") != "a,b" {
		t.Fatalf("Keys = %v", ks)
	}
}

func TestRecv(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if v, ok := storetest.Recv(ch, storetest.Patience); !ok || v != 7 {
		t.Fatalf("Recv = %v, %v", v, ok)
	}
	ch <- 8
	close(ch)
	if !storetest.Closes((<-chan int)(ch), storetest.Patience) {
		t.Fatal("Closes of a closed channel: false")
	}
	if _, ok := storetest.Recv(ch, storetest.Patience); ok {
		t.Fatal("Recv on a closed channel: ok")
	}
	if storetest.Closes(make(<-chan int), time.Millisecond) {
		t.Fatal("Closes of an open channel: true")
	}
}

// memory's valkeyrie constructor rejects a configuration without a name.
func TestRejectsConfigs(t *testing.T) {
	open := func(ctx context.Context, endpoints []string) (store.Store, error) {
		return valkeyrie.NewStore(ctx, memory.StoreName, endpoints, nil)
	}
	storetest.RejectsConfigs(t, open, func(err error, field string) bool { return err != nil && field == "Endpoints" },
		[]storetest.InvalidConfig[[]string]{{Name: "no name", Config: nil, Field: "Endpoints"}})
}

// The suite under a prefix, on the in-process store: the
// keys it leaves outside the prefix are none.
func TestRunSuitePrefixed(t *testing.T) {
	name := freshBackend(t)
	kv := memoryStore(t, name)
	if err := kv.Put(context.Background(), "outside", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	storetest.RunSuite(t, kv, storetest.Suite{
		Prefix: "p/q/",
		Atomic: true, Watch: true, Lock: true, ListLock: true,
		// LockTTL and TTL add nothing here but time.
	})
	pairs, err := kv.List(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		if p.Key != "outside" && !strings.HasPrefix(p.Key, "p/q/") {
			t.Errorf("key %q written outside the prefix", p.Key)
		}
	}
}

func TestWatchLifecycle(t *testing.T) {
	name := freshBackend(t)
	storetest.WatchLifecycle(t, memoryStore(t, name), memoryStore(t, name), "dir/key")
}

// ServersScript finds the repository's script from any package. "env"
// only prints the variables of the servers running (maybe none); it
// starts and stops nothing.
func TestServersScript(t *testing.T) {
	out := storetest.ServersScript(t, "env")
	for line := range strings.Lines(out) {
		if !strings.HasPrefix(line, "export LEADERSHIP_") {
			t.Fatalf("servers.sh env printed %q", out)
		}
	}
}

func TestEnvSkips(t *testing.T) {
	t.Setenv("LEADERSHIP_STORETEST_UNSET", "")
	var skipped bool
	t.Run("unset", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		storetest.Env(t, "LEADERSHIP_STORETEST_UNSET", "nothing")
	})
	if !skipped {
		t.Fatal("Env did not skip on an unset variable")
	}
	t.Setenv("LEADERSHIP_STORETEST_SET", "a:1,b:2")
	if eps := storetest.Endpoints(t, "LEADERSHIP_STORETEST_SET", "nothing"); strings.Join(eps, " ") != "a:1 b:2" {
		t.Fatalf("Endpoints = %q", eps)
	}
}

func TestBlocked(t *testing.T) {
	release := make(chan struct{})
	done := storetest.Blocked(t, "a receive from a silent channel", func() error {
		<-release
		return io.EOF
	})
	close(release)
	if err, ok := storetest.Recv(done, storetest.Patience); !ok || err != io.EOF { //nolint:errorlint // identity
		t.Fatalf("after release: %v, %v", err, ok)
	}
}
