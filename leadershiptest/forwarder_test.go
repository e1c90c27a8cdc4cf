package leadershiptest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer echoes every byte it receives, counts them, and can push bytes
// to every connection on its own.
type echoServer struct {
	ln       net.Listener
	wg       sync.WaitGroup
	received atomic.Int64
	accepted atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newEchoServer(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, conns: make(map[net.Conn]struct{})}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			s.mu.Lock()
			s.conns[c] = struct{}{}
			s.mu.Unlock()
			s.wg.Go(func() {
				defer func() {
					s.mu.Lock()
					delete(s.conns, c)
					s.mu.Unlock()
					_ = c.Close()
				}()
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						s.received.Add(int64(n))
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(s.close)
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

// push writes msg to every open connection.
func (s *echoServer) push(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_, _ = c.Write([]byte(msg))
	}
}

func (s *echoServer) openConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *echoServer) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func newTestForwarder(t *testing.T, target string) *Forwarder {
	t.Helper()
	f, err := NewForwarder(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// expectRead reads exactly len(want) bytes within d and compares them.
func expectRead(t *testing.T, c net.Conn, want string, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read %q: %v", want, err)
	}
	if !bytes.Equal(got, []byte(want)) {
		t.Fatalf("read %q, want %q", got, want)
	}
}

// expectTimeout checks that nothing arrives on c within d.
func expectTimeout(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 1)
	n, err := c.Read(buf)
	var ne net.Error
	if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read %d bytes, err %v; want a timeout", n, err)
	}
}

// expectBroken checks that c fails fast (reset or end of stream), not by a
// timeout.
func expectBroken(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1)
	start := time.Now()
	_, err := c.Read(buf)
	if err == nil {
		t.Fatal("read succeeded on a killed connection")
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read timed out after %v; want a reset or end of stream", time.Since(start))
	}
}

func write(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
}

// echoed dials addr, checks that msg comes back within 5s, and returns the
// connection.
func echoed(t *testing.T, addr, msg string) net.Conn {
	t.Helper()
	c := dial(t, addr)
	write(t, c, msg)
	expectRead(t, c, msg, 5*time.Second)
	return c
}

func waitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// quiet is how long the tests wait to see that nothing passes.
const quiet = 200 * time.Millisecond

func TestForwarderPasses(t *testing.T) {
	s := newEchoServer(t)
	f := newTestForwarder(t, s.addr())
	if f.Target() != s.addr() {
		t.Fatalf("Target() = %q", f.Target())
	}
	var wg sync.WaitGroup
	for i := range 8 {
		c := dial(t, f.Addr())
		wg.Go(func() {
			msg := string(rune('a'+i)) + "-hello"
			for range 20 {
				if _, err := c.Write([]byte(msg)); err != nil {
					t.Error(err)
					return
				}
				got := make([]byte, len(msg))
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.ReadFull(c, got); err != nil || string(got) != msg {
					t.Errorf("echo %q: %q, %v", msg, got, err)
					return
				}
			}
		})
	}
	wg.Wait()

	// A half-close passes through: the server sees the end of the stream and
	// its answer still arrives.
	c := dial(t, f.Addr())
	write(t, c, "bye")
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	all, err := io.ReadAll(c)
	if err != nil || string(all) != "bye" {
		t.Fatalf("after half-close: %q, %v", all, err)
	}
}

func TestForwarderCutAndHeal(t *testing.T) {
	s := newEchoServer(t)
	f := newTestForwarder(t, s.addr())
	old := echoed(t, f.Addr(), "one")

	f.Cut()
	f.Cut() // idempotent
	before := s.received.Load()
	// Client to server: nothing reaches the server, so no echo.
	write(t, old, "two")
	expectTimeout(t, old, quiet)
	if got := s.received.Load(); got != before {
		t.Fatalf("server received %d bytes during the cut", got-before)
	}
	// Server to client: nothing reaches the client.
	s.push("pushed")
	expectTimeout(t, old, quiet)
	// A new connection is accepted but passes nothing and does not reach
	// the server.
	accepted := s.accepted.Load()
	fresh := dial(t, f.Addr())
	write(t, fresh, "three")
	expectTimeout(t, fresh, quiet)
	if s.accepted.Load() != accepted {
		t.Fatal("a connection made during the cut reached the server")
	}

	f.Heal()
	f.Heal() // idempotent
	// The old connection lived through the cut and gets what was held, in
	// order: the pushed bytes (held on the way back) and the echo of "two"
	// (held on the way out, echoed after the heal).
	_ = old.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len("pushedtwo"))
	if _, err := io.ReadFull(old, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != "pushedtwo" {
		t.Fatalf("after heal: %q, want %q", got, "pushedtwo")
	}
	// The connection made during the cut is connected now.
	expectRead(t, fresh, "three", 5*time.Second)
	// And a new one works.
	echoed(t, f.Addr(), "four")
}

func TestForwarderCloseDuringCut(t *testing.T) {
	s := newEchoServer(t)
	f := newTestForwarder(t, s.addr())
	c := echoed(t, f.Addr(), "x")
	f.Cut()
	_ = c.Close()
	time.Sleep(quiet)
	if n := s.openConns(); n != 1 {
		t.Fatalf("the server saw the client's close through the cut (%d connections open)", n)
	}
	f.Heal()
	waitCond(t, "server sees the close after the heal", func() bool { return s.openConns() == 0 })
}

func TestForwarderKill(t *testing.T) {
	s := newEchoServer(t)
	f := newTestForwarder(t, s.addr())
	a, b := echoed(t, f.Addr(), "a"), echoed(t, f.Addr(), "b")
	waitCond(t, "server sees both connections", func() bool { return s.openConns() == 2 })

	f.Kill()
	expectBroken(t, a)
	expectBroken(t, b)
	// The server's side is closed too.
	waitCond(t, "server sees the connections end", func() bool { return s.openConns() == 0 })
	// The forwarder keeps serving.
	c := echoed(t, f.Addr(), "c")

	// Kill during a cut keeps the cut; the heal then serves new connections.
	f.Cut()
	held := dial(t, f.Addr())
	write(t, held, "held")
	waitCond(t, "forwarder holds both connections", func() bool { return f.conns() == 2 })
	f.Kill()
	expectBroken(t, c)
	expectBroken(t, held)
	d := dial(t, f.Addr())
	write(t, d, "d")
	expectTimeout(t, d, quiet)
	f.Heal()
	expectRead(t, d, "d", 5*time.Second)
}

func TestForwarderClose(t *testing.T) {
	s := newEchoServer(t)
	f, err := NewForwarder(s.addr())
	if err != nil {
		t.Fatal(err)
	}
	addr := f.Addr()
	a := echoed(t, addr, "a")
	f.Cut()
	cut := dial(t, addr) // waiting for the heal when Close comes
	waitCond(t, "forwarder holds both connections", func() bool { return f.conns() == 2 })
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	expectBroken(t, a)
	expectBroken(t, cut)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Fatal("dial succeeded after Close")
	}
	// The other methods are harmless after Close.
	f.Cut()
	f.Heal()
	f.Kill()
}

func TestForwarderTargetDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	f := newTestForwarder(t, addr)
	// The connection is accepted, then reset when the target refuses it
	// (the reset may already reach the dial).
	if c, err := net.DialTimeout("tcp", f.Addr(), 5*time.Second); err == nil {
		t.Cleanup(func() { _ = c.Close() })
		expectBroken(t, c)
	}
	if _, err := NewForwarder("no port"); err == nil {
		t.Fatal("NewForwarder accepted a target without a port")
	}
}

func TestForwarderConcurrentUse(t *testing.T) {
	s := newEchoServer(t)
	f, err := NewForwarder(s.addr())
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			buf := make([]byte, 16)
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", f.Addr(), time.Second)
				if err != nil {
					continue
				}
				_ = c.SetDeadline(time.Now().Add(20 * time.Millisecond))
				_, _ = c.Write([]byte("x"))
				_, _ = c.Read(buf)
				_ = c.Close()
			}
		})
	}
	for i := range 4 {
		wg.Go(func() {
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				switch (i + j) % 3 {
				case 0:
					f.Cut()
				case 1:
					f.Heal()
				default:
					f.Kill()
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- f.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	close(stop)
	wg.Wait()
}

// A forwarder with a latency delays every exchange by a round trip of
// twice that, keeps the bytes in order, and still cuts, heals and closes.
func TestForwarderLatency(t *testing.T) {
	srv := newEchoServer(t)
	f := newTestForwarder(t, srv.addr())
	const oneWay = 50 * time.Millisecond
	f.SetLatency(oneWay)
	c := dial(t, f.Addr())
	for _, msg := range []string{"one", "two", "three"} {
		start := time.Now()
		write(t, c, msg)
		expectRead(t, c, msg, 10*time.Second)
		if rtt := time.Since(start); rtt < 2*oneWay {
			t.Fatalf("round trip of %q took %v, less than 2 x %v", msg, rtt, oneWay)
		}
	}
	// Many writes in flight at once arrive in order.
	var want bytes.Buffer
	for i := range 100 {
		msg := string(rune('a' + i%26))
		want.WriteString(msg)
		write(t, c, msg)
	}
	expectRead(t, c, want.String(), 10*time.Second)

	f.Cut()
	write(t, c, "held")
	expectTimeout(t, c, 4*oneWay)
	f.Heal()
	expectRead(t, c, "held", 10*time.Second)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	expectBroken(t, c)
}
