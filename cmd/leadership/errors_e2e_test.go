//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// statusLine runs the binary's status on url and returns its exit code
// and its stderr, which must be exactly one line.
func statusLine(t *testing.T, bin, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "status", "--store", url, "--key", "errors/one-line")
	cmd.Env = cleanEnv()
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("status %s: %v", url, err)
	}
	out := strings.TrimRight(stderr.String(), "\n")
	if strings.Count(out, "\n") != 0 {
		t.Errorf("status %s: stderr has %d lines, want one:\n%s", url, strings.Count(out, "\n")+1, out)
	}
	return code, out
}

// Unreachable stores: one line on stderr, in words a user knows: no second
// line from a client library's own logger, the refused connection named
// (not a deadline), no package jargon.
func TestE2EUnreachableStoreOneLine(t *testing.T) {
	bin := testBinary(t)
	closed := deadAddr(t)
	for _, tc := range []struct{ url, want string }{
		{"redis://" + closed, "connection refused"},
		{"etcd://" + closed, "connection refused"},
		{"consul://" + closed, "connection refused"},
		{"zk://" + closed, "not reachable"},
		{"postgres://postgres@" + closed + "/db?sslmode=disable", "connection refused"},
	} {
		t.Run(strings.SplitN(tc.url, ":", 2)[0], func(t *testing.T) {
			code, line := statusLine(t, bin, tc.url)
			if code != exitFailure || !strings.Contains(line, tc.want) || strings.Contains(line, "guard") {
				t.Errorf("status %s: exit %d, %q; want exit %d and one line with %q", tc.url, code, line, exitFailure, tc.want)
			}
		})
	}
}

// A TLS mismatch is named as such, on the real servers the environment
// names: TLS asked of a plain-text etcd and Redis.
func TestE2ETLSMismatchNamed(t *testing.T) {
	bin := testBinary(t)
	ran := false
	for _, tc := range []struct{ env, scheme, want string }{
		{"LEADERSHIP_ETCD", "etcd://", "does not speak TLS"},
		{"LEADERSHIP_REDIS", "redis://", "did not answer a TLS handshake"},
	} {
		ep := strings.Split(os.Getenv(tc.env), ",")[0]
		if ep == "" {
			continue
		}
		ran = true
		url := tc.scheme + ep + "?tls=true"
		code, line := statusLine(t, bin, url)
		if code != exitFailure || !strings.Contains(line, tc.want) || strings.Contains(line, "guard") {
			t.Errorf("status %s: exit %d, %q; want exit %d and one line with %q", url, code, line, exitFailure, tc.want)
		}
	}
	if !ran {
		t.Skip("no LEADERSHIP_ETCD or LEADERSHIP_REDIS (scripts/servers.sh env)")
	}
}

// A store that cannot be reached when run, follow or proxy start is
// retried, each failure logged, not a reason to exit (issue 26): run --try
// bounds it (exit 6), follow keeps trying until stopped (exit 0); status,
// a one-shot read, exits 1.
func TestE2EStoreDownAtStart(t *testing.T) {
	bin := testBinary(t)
	url := "etcd://" + deadAddr(t)
	run := startProc(t, "run", cleanEnv(), bin, "run", "--store", url, "--key", "k", "--name", "n", "--try", "3s", "--", "true")
	if code := run.exitCode(t, time.Minute); code != exitNotElected || len(linesWith(run.stderr.String(), "(retrying in")) == 0 {
		t.Errorf("run --try 3s on a closed port: exit %d, want %d after retries:\n%s", code, exitNotElected, run.stderr.String())
	}
	follow := startProc(t, "follow", cleanEnv(), bin, "follow", "--store", url, "--key", "k")
	if !waitFor(time.Minute, func() bool { return len(linesWith(follow.stderr.String(), "(retrying in")) >= 2 }) {
		t.Fatalf("follow on a closed port did not keep trying:\n%s", follow.stderr.String())
	}
	follow.signal(syscall.SIGTERM)
	follow.exitCode(t, time.Minute)
	if code, line := statusLine(t, bin, url); code != exitFailure || !strings.Contains(line, "connection refused") {
		t.Errorf("status on a closed port: exit %d, %q", code, line)
	}
}

// run, follow and proxy stopped by SIGTERM while they still retry to open
// a store that is down exit 0, as after SIGTERM once started (docs/cli.md,
// Exit codes): a supervisor stopping a service that never reached its
// store records no failure (issue 32).
func TestE2ESigtermWhileRetrying(t *testing.T) {
	bin := testBinary(t)
	url := "etcd://" + deadAddr(t)
	for _, args := range [][]string{
		{"run", "--store", url, "--key", "k", "--name", "n", "--", "true"},
		{"follow", "--store", url, "--key", "k"},
		{"proxy", "--store", url, "--key", "k", "--listen", "127.0.0.1:0"},
	} {
		t.Run(args[0], func(t *testing.T) {
			p := startProc(t, args[0], cleanEnv(), bin, args...)
			if !waitFor(time.Minute, func() bool { return len(linesWith(p.stderr.String(), "(retrying in")) >= 1 }) {
				t.Fatalf("%s on a closed port is not retrying:\n%s", args[0], p.stderr.String())
			}
			p.signal(syscall.SIGTERM)
			if code := p.exitCode(t, time.Minute); code != exitOK {
				t.Errorf("%s stopped by SIGTERM while retrying: exit %d, want %d:\n%s", args[0], code, exitOK, p.stderr.String())
			}
		})
	}
}

// etcd refusing the credentials, or a server that accepts and never
// answers: one line on stderr, none from the etcd client's logger (which
// logged "retrying of unary invoker failed" while authenticating), on the
// secured etcd the environment names (scripts/servers.sh start
// etcd-secure).
func TestE2EEtcdRefusedOneLine(t *testing.T) {
	raw := os.Getenv("LEADERSHIP_ETCD_SECURE_OTHER")
	if raw == "" {
		t.Skip("no LEADERSHIP_ETCD_SECURE_OTHER (scripts/servers.sh start etcd-secure; scripts/servers.sh env)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	const wrong = "Wr0ngPassw0rdXyz"
	q := u.Query()
	q.Set("dial_timeout", "20s") // a TLS handshake under -race on a loaded machine
	u.RawQuery = q.Encode()
	u.User = url.UserPassword(u.User.Username(), wrong)
	wrongPassword := u.String()
	u.User = url.UserPassword("nobody-such-user", wrong)
	unknownUser := u.String()
	u.User = url.UserPassword(u.User.Username(), wrong)
	u.Host = silentAddr(t)
	q.Set("dial_timeout", "2s")
	u.RawQuery = q.Encode()
	silent := u.String()
	bin := testBinary(t)
	for _, tc := range []struct{ name, url, want string }{
		{"wrong password", wrongPassword, "authentication failed"},
		{"unknown user", unknownUser, "authentication failed"},
		{"silent server", silent, "not reachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, line := statusLine(t, bin, tc.url)
			if code != exitFailure || !strings.Contains(line, tc.want) || strings.Contains(line, wrong) || strings.Contains(line, "etcd-client") {
				t.Errorf("status: exit %d, %q; want exit %d and one line with %q, without the password", code, line, exitFailure, tc.want)
			}
		})
	}
}

// silentAddr returns the address of a TCP listener that accepts
// connections and never answers (closed at cleanup).
func silentAddr(t *testing.T) string {
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
