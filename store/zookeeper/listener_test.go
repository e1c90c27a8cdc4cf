package zookeeper

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// hungServer accepts connections and never answers.
type hungServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func newHungServer(t *testing.T) *hungServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hungServer{ln: ln, done: make(chan struct{})}
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

func (h *hungServer) addr() string { return h.ln.Addr().String() }

func (h *hungServer) accepted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// openConns counts the accepted connections the client has not closed.
func (h *hungServer) openConns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	buf := make([]byte, 1)
	for _, c := range h.conns {
		_ = c.SetReadDeadline(deadlineNow())
		if _, err := c.Read(buf); isTimeout(err) {
			n++
		}
	}
	return n
}

func (h *hungServer) close() {
	_ = h.ln.Close()
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		_ = c.Close()
	}
}

// refusedAddr returns an address on which nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func deadlineNow() time.Time { return time.Now().Add(10 * time.Millisecond) }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
