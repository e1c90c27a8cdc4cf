package all_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leadership-go/leadership/store/open"
)

// quietChildEnv, when set, makes TestSecureEtcdQuiet the child: it opens
// the URL in the variable and prints the error on stdout, nothing else.
const quietChildEnv = "LEADERSHIP_TEST_QUIET_CHILD_URL"

// TestSecureEtcdQuiet: an etcd open refused for a wrong password or an
// unknown user, or timed out on a server that accepts connections and
// never answers, writes nothing to stderr (the etcd client's zap logger
// wrote "retrying of unary invoker failed" while authenticating in its
// constructor). Each open runs in a child process, whose stderr is the
// whole of what it printed.
func TestSecureEtcdQuiet(t *testing.T) {
	if raw := os.Getenv(quietChildEnv); raw != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		kv, err := open.Store(ctx, raw)
		if err == nil {
			_ = kv.Close()
		}
		fmt.Printf("open error: %v\n", err)
		return
	}
	_, _, other := securedServer{name: "etcd", env: "LEADERSHIP_ETCD_SECURE"}.urls(t)
	if other == "" {
		t.Fatal("LEADERSHIP_ETCD_SECURE_OTHER is not set")
	}
	spec, err := open.Parse(other)
	if err != nil || spec.Username == "" || spec.Password == "" {
		t.Fatalf("%s: want a URL with a user and a password", redact(other))
	}
	const wrong = "Wr0ngPassw0rdXyz"
	wrongPassword := strings.Replace(other, ":"+spec.Password+"@", ":"+wrong+"@", 1)
	unknownUser := strings.Replace(wrongPassword, "//"+spec.Username+":", "//nobody-such-user:", 1)
	silent := withParams(t, strings.Replace(wrongPassword, spec.Endpoints[0], silentServer(t), 1), map[string]string{"dial_timeout": "2s"})
	for _, tc := range []struct{ name, url, want string }{
		{"wrong password", wrongPassword, "authentication failed"},
		{"unknown user", unknownUser, "authentication failed"},
		{"silent server", silent, "not reachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr := quietChild(t, tc.url)
			if !strings.Contains(stdout, "open error: ") || !strings.Contains(stdout, tc.want) {
				t.Errorf("open %s: %q, want an error with %q", redact(tc.url), stdout, tc.want)
			}
			if strings.Contains(stdout, wrong) || strings.Contains(stderr, wrong) {
				t.Errorf("open %s: the password shows", redact(tc.url))
			}
			if stderr != "" {
				t.Errorf("open %s: stderr is not empty:\n%s", redact(tc.url), stderr)
			}
		})
	}
}

// quietChild runs this test binary's TestSecureEtcdQuiet as the child
// opening url, and returns its stdout and stderr.
func quietChild(t *testing.T, url string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSecureEtcdQuiet$", "-test.count=1")
	cmd.Env = append(os.Environ(), quietChildEnv+"="+url, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// silentServer returns the address of a TCP listener that accepts
// connections and never answers (closed at cleanup).
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}
