package redis

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

// envServer names the environment variable holding the test server's
// address, host:port (see scripts/README.md).
const envServer = "LEADERSHIP_REDIS"

func TestMain(m *testing.M) {
	// No goroutine of kvtools or go-redis outlives Close: no ignores.
	goleak.VerifyTestMain(m)
}

// serverConfig is the Config of the test server, or skips the test.
func serverConfig(t *testing.T) Config {
	t.Helper()
	v := storetest.Env(t, envServer, "a running Redis with keyspace notifications (scripts/servers.sh start redis)")
	return Config{Endpoints: []string{v}}
}

// openClient opens one client, as a separate process would, and closes it
// at cleanup.
func openClient(t *testing.T, cfg Config) store.Store {
	t.Helper()
	return storetest.OpenStore(t, cfg.Endpoints[0], func(ctx context.Context) (store.Store, error) { return Open(ctx, cfg) })
}

// uniqueKey returns a key no other test, run or process uses.
func uniqueKey(t *testing.T) string { return storetest.TestKey(t, "redis") }

// leakTest starts a test that ends with goleak.VerifyNone(t, leaks), to
// check that the stores it opens leave nothing running: cfg is the test
// server's Config, other a store to write with (its goroutines, which end
// at cleanup, are in leaks), and key a fresh key, deleted at cleanup.
func leakTest(t *testing.T) (cfg Config, other store.Store, leaks goleak.Option, key string) {
	t.Helper()
	cfg = serverConfig(t)
	other = openClient(t, cfg)
	leaks = goleak.IgnoreCurrent()
	key = uniqueKey(t)
	t.Cleanup(func() { _ = other.Delete(context.Background(), key) })
	return cfg, other, leaks, key
}

// proxy forwards connections to a target until Cut, after which it passes
// nothing more (a hung server, as seen by its clients), or Kill, which
// resets every connection and refuses new ones (a dead server).
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	open   chan struct{} // closed while traffic passes
	dead   chan struct{} // closed by Kill
	killed bool
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, open: make(chan struct{}), dead: make(chan struct{})}
	close(p.open)
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			if !p.track(c, s) {
				continue
			}
			p.wg.Go(func() { p.pipe(s, c) })
			p.wg.Go(func() { p.pipe(c, s) })
		}
	})
	t.Cleanup(p.Kill)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killed {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	p.conns = append(p.conns, cs...)
	return true
}

func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			open := p.open
			p.mu.Unlock()
			select {
			case <-open:
			case <-p.dead:
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			_ = dst.Close()
			return
		}
	}
}

// Cut stops all traffic, in both directions, on every connection.
func (p *proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open = make(chan struct{})
}

// Kill resets every connection, refuses new ones and waits for the
// proxy's goroutines. It is idempotent.
func (p *proxy) Kill() {
	p.mu.Lock()
	if p.killed {
		p.mu.Unlock()
		return
	}
	p.killed = true
	close(p.dead)
	_ = p.ln.Close()
	for _, c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
