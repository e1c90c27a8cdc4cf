package zookeeper

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
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
//
// With a TLS configuration it speaks TLS on every connection, and
// remembers why a TLS connection failed (the handshake, or the server
// refusing the client certificate after it), which the zk client only
// logs, so that Open can say it.
type dialer struct {
	timeout time.Duration
	tls     *tls.Config
	ctx     context.Context
	cancel  context.CancelFunc

	mu        sync.Mutex
	conns     map[*trackedConn]struct{}
	tlsErr    error               // the last TLS failure
	tlsFailed map[string]struct{} // the endpoints that had one
	tlsAll    chan struct{}       // closed when every endpoint had one
	endpoints int
}

func newDialer(timeout time.Duration, cfg *tls.Config, endpoints int) *dialer {
	ctx, cancel := context.WithCancel(context.Background())
	return &dialer{timeout: timeout, tls: cfg, ctx: ctx, cancel: cancel, conns: map[*trackedConn]struct{}{},
		tlsFailed: map[string]struct{}{}, tlsAll: make(chan struct{}), endpoints: endpoints}
}

// dial is a zk.Dialer. The zk client's own timeout (1s) is replaced by ours.
func (d *dialer) dial(network, address string, _ time.Duration) (net.Conn, error) {
	nd := net.Dialer{Timeout: d.timeout, KeepAlive: 15 * time.Second}
	c, err := nd.DialContext(d.ctx, network, address)
	if err != nil {
		return nil, err
	}
	if d.tls != nil {
		tlsConn := tls.Client(c, adapter.ForEndpoint(d.tls, address))
		hctx, cancel := context.WithTimeout(d.ctx, d.timeout)
		err := tlsConn.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = c.Close()
			if d.ctx.Err() == nil {
				if adapter.RemoteAlert(err) != nil { // TLS 1.2: the server checks the client certificate in the handshake
					d.failTLS(address, d.refusedCert(address, err))
				} else {
					d.failTLS(address, fmt.Errorf("TLS handshake with %s failed: %w", address, err))
				}
			}
			return nil, err
		}
		c = tlsConn
	}
	tc := &trackedConn{Conn: c, d: d, address: address}
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

// failTLS records a TLS failure on address.
func (d *dialer) failTLS(address string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tlsErr = adapter.Tag(err, lstore.ErrTLS) // the shared vocabulary's TLS failure
	if _, ok := d.tlsFailed[address]; ok {
		return
	}
	d.tlsFailed[address] = struct{}{}
	if len(d.tlsFailed) == d.endpoints {
		close(d.tlsAll)
	}
}

// lastTLSError returns the last TLS failure, or nil.
func (d *dialer) lastTLSError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tlsErr
}

// refusedCert explains a TLS alert the server sent after the handshake: in
// TLS 1.3 the server checks the client certificate after the client
// considers the handshake done, so its refusal comes with the first read.
func (d *dialer) refusedCert(address string, alert error) error {
	what := "the connection without a client certificate (give cert= and key=)"
	if len(d.tls.Certificates) > 0 && len(d.tls.Certificates[0].Certificate) > 0 {
		leaf := d.tls.Certificates[0].Leaf
		if leaf == nil {
			leaf, _ = x509.ParseCertificate(d.tls.Certificates[0].Certificate[0])
		}
		switch {
		case leaf == nil:
			what = "the client certificate"
		case time.Now().After(leaf.NotAfter):
			what = fmt.Sprintf("the client certificate %q: it expired on %s", leaf.Subject.CommonName, leaf.NotAfter.UTC().Format(time.DateOnly))
		case time.Now().Before(leaf.NotBefore):
			what = fmt.Sprintf("the client certificate %q: it is not valid before %s", leaf.Subject.CommonName, leaf.NotBefore.UTC().Format(time.DateOnly))
		default:
			what = fmt.Sprintf("the client certificate %q issued by %q (not trusted by the server?)", leaf.Subject.CommonName, leaf.Issuer.CommonName)
		}
	}
	return fmt.Errorf("TLS: %s refused %s: %w", address, what, alert)
}

// speaksTLS reports whether the server at endpoint answers a TLS
// handshake (completing it, or refusing it with a TLS alert because it
// wants a client certificate), for an Open without TLS that got no answer.
func speaksTLS(ctx context.Context, endpoint string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only asks whether the server speaks TLS
	c, err := d.DialContext(ctx, "tcp", endpoint)
	if err == nil {
		_ = c.Close()
		return true
	}
	return adapter.RemoteAlert(err) != nil
}

type trackedConn struct {
	net.Conn
	d       *dialer
	address string
	once    sync.Once
}

// Read notes a TLS alert of the server (a refused client certificate).
func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && c.d.tls != nil && adapter.RemoteAlert(err) != nil && c.d.ctx.Err() == nil {
		c.d.failTLS(c.address, c.d.refusedCert(c.address, err))
	}
	return n, err
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
// level instead of the standard logger, with the password masked should
// one ever appear in them.
type zkLogger struct{ secret string }

func (l zkLogger) Printf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if l.secret != "" {
		msg = strings.ReplaceAll(msg, l.secret, "xxxxx")
	}
	slog.Default().Debug(msg, "component", "zookeeper")
}
