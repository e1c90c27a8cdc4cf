package zookeeper

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"
)

// hostProvider hands out the endpoints in turn, as zk's DNSHostProvider
// does, but without resolving them up front: net.LookupHost there has no
// timeout, and the dialer resolves each name when it connects.
type hostProvider struct {
	mu         sync.Mutex
	servers    []string
	curr, last int
}

func (hp *hostProvider) Init(servers []string) error {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	hp.servers = append([]string(nil), servers...)
	hp.curr, hp.last = -1, -1
	return nil
}

func (hp *hostProvider) Len() int {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	return len(hp.servers)
}

func (hp *hostProvider) Next() (string, bool) {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	hp.curr = (hp.curr + 1) % len(hp.servers)
	retryStart := hp.curr == hp.last
	if hp.last == -1 {
		hp.last = 0
	}
	return hp.servers[hp.curr], retryStart
}

func (hp *hostProvider) Connected() {
	hp.mu.Lock()
	defer hp.mu.Unlock()
	hp.last = hp.curr
}

// dialer opens the client's TCP connections and keeps track of them, so
// that Close can break a connection the zk client is stuck on (its session
// handshake against a server that accepts but never answers waits 20 times
// the session timeout) and refuse new ones.
type dialer struct {
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelFunc

	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func newDialer(timeout time.Duration) *dialer {
	ctx, cancel := context.WithCancel(context.Background())
	return &dialer{timeout: timeout, ctx: ctx, cancel: cancel, conns: map[*trackedConn]struct{}{}}
}

// dial is a zk.Dialer. The zk client's own timeout (1s) is replaced by ours.
func (d *dialer) dial(network, address string, _ time.Duration) (net.Conn, error) {
	nd := net.Dialer{Timeout: d.timeout, KeepAlive: 15 * time.Second}
	c, err := nd.DialContext(d.ctx, network, address)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, d: d}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		_ = c.Close()
		return nil, fmt.Errorf("zookeeper: dial %s: %w", address, d.ctx.Err())
	}
	d.conns[tc] = struct{}{}
	return tc, nil
}

// close cancels dials in progress, refuses new ones and closes every open
// connection.
func (d *dialer) close() {
	d.mu.Lock()
	d.cancel()
	conns := d.conns
	d.conns = map[*trackedConn]struct{}{}
	d.mu.Unlock()
	for c := range conns {
		_ = c.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	d    *dialer
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		delete(c.d.conns, c)
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}

// zkLogger sends the zk client's messages to slog's default logger at debug
// level instead of the standard logger.
type zkLogger struct{}

func (zkLogger) Printf(format string, args ...any) {
	slog.Default().Debug(fmt.Sprintf(format, args...), "component", "zookeeper")
}
