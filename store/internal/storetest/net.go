package storetest

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// RefusedAddr returns a 127.0.0.1 address on which nothing listens.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// ServeAddr returns the address of a 127.0.0.1 listener that hands each
// connection it accepts to serve, in its accepting goroutine: serve must
// not block for long. The listener is closed, and its goroutine waited
// for, at the end of the test.
func ServeAddr(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			serve(c)
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

// HungServer accepts connections and never answers, as a hung server
// does. It closes its listener and every connection at the end of the
// test that made it.
type HungServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

// NewHungServer starts a HungServer on 127.0.0.1.
func NewHungServer(t testing.TB) *HungServer {
	t.Helper()
	skipShort(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &HungServer{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	t.Cleanup(h.close)
	return h
}

// HungAddr returns the address of a new HungServer.
func HungAddr(t testing.TB) string {
	t.Helper()
	return NewHungServer(t).Addr()
}

// Addr is the server's host:port.
func (h *HungServer) Addr() string { return h.ln.Addr().String() }

// Accepted is the number of connections accepted so far.
func (h *HungServer) Accepted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// OpenConns counts the accepted connections the client has not closed.
func (h *HungServer) OpenConns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	buf := make([]byte, 1)
	for _, c := range h.conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		var ne net.Error
		if _, err := c.Read(buf); errors.As(err, &ne) && ne.Timeout() {
			n++
		}
	}
	return n
}

func (h *HungServer) close() {
	_ = h.ln.Close()
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		_ = c.Close()
	}
}

// GatedAddr returns the address of a server that accepts connections and
// holds them unanswered, as a hung server does, until release is called;
// from then on every connection, held or new, is forwarded to target.
// Everything is closed at the end of the test.
func GatedAddr(t testing.TB, target string) (addr string, release func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	pipe := func(a, b net.Conn) {
		_, _ = io.Copy(a, b)
		_ = a.Close()
		_ = b.Close()
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			wg.Go(func() {
				<-gate
				s, err := net.Dial("tcp", target)
				if err != nil {
					_ = c.Close()
					return
				}
				track(s)
				wg.Go(func() { pipe(s, c) })
				pipe(c, s)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		once.Do(func() { close(gate) })
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String(), func() { once.Do(func() { close(gate) }) }
}
