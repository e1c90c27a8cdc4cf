package leadershiptest

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Forwarder is a TCP forwarder that a backend puts between one client and
// its server, so that the suite can cut that client off (Cut), let it back
// (Heal) or make it vanish (Kill, Close) while the server keeps running for
// everyone else. It listens on 127.0.0.1 and forwards every connection it
// accepts to the target. Every method is safe for concurrent use.
//
// The faults it injects:
//
//   - Cut is a network partition. Established connections stay open but
//     pass nothing in either direction: the bytes the forwarder has already
//     read (at most 32 KiB per direction) are held, and TCP flow control
//     stops the senders after that. New connections are accepted but pass
//     nothing either, and are not connected to the target until Heal. So
//     clients see their requests time out, not quick refusals.
//   - Heal ends the partition. Connections that lived through the cut are
//     kept and resume with the bytes they held, in order, as TCP connections
//     do after a short partition; connections accepted during the cut are
//     connected to the target now. A connection that one side closed or
//     reset during the cut is closed or reset on the other side at the
//     heal, not before. A backend that prefers its clients to reconnect
//     from scratch calls Kill and then Heal.
//   - Kill closes every connection at once, abruptly (SO_LINGER 0, so both
//     the client and the server get a reset rather than an orderly close),
//     as if the client's process had died. The forwarder keeps listening,
//     and the cut or healed state is unchanged: new connections are served
//     as that state says.
//   - Close stops listening (new connections are refused), kills every
//     connection as Kill does, and returns once every goroutine of the
//     forwarder has ended. It is the natural Client.Vanish: the client's
//     connections are reset and it never gets through again. (Cut followed
//     by Kill also keeps it out, but some clients then block for their own
//     long timeouts whatever their context says, which slows down the
//     stopping of what ran on them.)
//   - SetLatency delays every byte by a fixed time in each direction, as a
//     long link does (another region): a round trip through the forwarder
//     takes twice the latency more. Bytes keep their order, and the
//     throughput is not limited (a cut then holds up to 2 MiB per
//     direction, what was in flight).
type Forwarder struct {
	target  string
	ln      net.Listener
	wg      sync.WaitGroup
	latency atomic.Int64 // one-way delay, in nanoseconds

	mu     sync.Mutex
	open   chan struct{} // closed while traffic passes; replaced by Cut
	links  map[*link]struct{}
	closed bool
}

// link is one forwarded connection: the client's side and, once connected,
// the server's side.
type link struct {
	client net.Conn
	server net.Conn // nil until connected to the target (guarded by Forwarder.mu)
	dead   chan struct{}
	cancel context.CancelFunc // cancels the dial to the target
	once   sync.Once
}

// dialTimeout bounds the connection to the target.
const dialTimeout = 10 * time.Second

// NewForwarder listens on a free port of 127.0.0.1 and forwards every
// connection to target (host:port). Traffic passes until Cut.
func NewForwarder(target string) (*Forwarder, error) {
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	f := &Forwarder{target: target, ln: ln, open: open, links: make(map[*link]struct{})}
	f.wg.Go(f.acceptLoop)
	return f, nil
}

// SetLatency delays everything the forwarder passes by oneWay in each
// direction, from now on (a chunk read before is not delayed again), so
// that a round trip takes 2 x oneWay more. Zero, the default, passes bytes
// at once. It is meant to be set before the client connects.
func (f *Forwarder) SetLatency(oneWay time.Duration) { f.latency.Store(int64(max(oneWay, 0))) }

// Addr returns the address clients should dial instead of the target, as
// host:port.
func (f *Forwarder) Addr() string { return f.ln.Addr().String() }

// Target returns the address the forwarder forwards to.
func (f *Forwarder) Target() string { return f.target }

// Cut partitions every connection, present and future, until Heal (see
// Forwarder). It is idempotent.
func (f *Forwarder) Cut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.open:
		f.open = make(chan struct{})
	default: // already cut
	}
}

// Heal lets traffic pass again after Cut: connections resume with the bytes
// they held (see Forwarder). It is idempotent.
func (f *Forwarder) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.open:
	default:
		close(f.open)
	}
}

// Kill closes every connection abruptly, at once, on both sides (see
// Forwarder). The forwarder keeps listening.
func (f *Forwarder) Kill() {
	f.mu.Lock()
	links := slices.Collect(maps.Keys(f.links))
	f.mu.Unlock()
	for _, l := range links {
		f.kill(l, false)
	}
}

// Close stops listening, kills every connection and returns once every
// goroutine of the forwarder has ended. It is idempotent.
func (f *Forwarder) Close() error {
	f.mu.Lock()
	already := f.closed
	f.closed = true
	f.mu.Unlock()
	var err error
	if !already {
		err = f.ln.Close()
	}
	f.Kill()
	f.wg.Wait()
	return err
}

// conns returns the number of connections the forwarder holds.
func (f *Forwarder) conns() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.links)
}

// gate returns the channel that is closed while traffic passes.
func (f *Forwarder) gate() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

// waitOpen waits until traffic may pass, and reports false if the link died
// first.
func (f *Forwarder) waitOpen(l *link) bool {
	for {
		select {
		case <-l.dead:
			return false
		default:
		}
		open := f.gate()
		select {
		case <-l.dead:
			return false
		case <-open:
			// A Cut may have come between gate and now: look again, so
			// that nothing passes once Cut has returned.
			if f.gate() == open {
				return true
			}
		}
	}
}

func (f *Forwarder) acceptLoop() {
	var delay time.Duration
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient error (out of file descriptors, say): back off.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		delay = 0
		ctx, cancel := context.WithCancel(context.Background())
		l := &link{client: conn, dead: make(chan struct{}), cancel: cancel}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			cancel()
			abort(conn)
			continue
		}
		f.links[l] = struct{}{}
		f.mu.Unlock()
		f.wg.Go(func() { f.serve(ctx, l) })
	}
}

// serve connects one accepted connection to the target once traffic may
// pass, then pumps bytes both ways until both directions end or the link is
// killed.
func (f *Forwarder) serve(ctx context.Context, l *link) {
	defer func() {
		f.kill(l, true)
		f.mu.Lock()
		delete(f.links, l)
		f.mu.Unlock()
	}()
	if !f.waitOpen(l) {
		return
	}
	d := net.Dialer{Timeout: dialTimeout}
	server, err := d.DialContext(ctx, "tcp", f.target)
	if err != nil {
		f.kill(l, false) // the client sees a reset, as from a server that is down
		return
	}
	f.mu.Lock()
	select {
	case <-l.dead:
		f.mu.Unlock()
		abort(server)
		return
	default:
	}
	l.server = server
	f.mu.Unlock()

	var pumps sync.WaitGroup
	pumps.Go(func() { f.pump(l, l.client, server) })
	f.pump(l, server, l.client)
	pumps.Wait()
}

// pumpNow is pump without latency: one chunk read, then written, so that
// a cut holds at most one chunk per direction.
func (f *Forwarder) pumpNow(l *link, src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !f.waitOpen(l) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				f.kill(l, false)
				return
			}
		}
		if err != nil {
			f.ended(l, dst, err)
			return
		}
	}
}

// ended passes on the end of src, orderly (a half-close) or not (the link
// is killed), once the gate is open.
func (f *Forwarder) ended(l *link, dst net.Conn, err error) {
	// The end of src, orderly or not, is traffic too: it passes only
	// while the gate is open.
	if !f.waitOpen(l) {
		return
	}
	if errors.Is(err, io.EOF) {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
			return
		}
	}
	f.kill(l, false)
}

// chunk is what one read of a pump returned, and when it may be passed on.
type chunk struct {
	data []byte
	err  error
	due  time.Time
}

// pump copies src to dst while the gate is open, each chunk once the
// latency has passed since it was read. At the end of src it half-closes
// dst; on any other error it kills the link.
func (f *Forwarder) pump(l *link, src, dst net.Conn) {
	if f.latency.Load() == 0 {
		f.pumpNow(l, src, dst)
		return
	}
	// The reader goes on reading while earlier chunks wait out their
	// latency, as bytes in flight on a long link.
	chunks := make(chan chunk, 64)
	f.wg.Go(func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			c := chunk{data: buf[:n], err: err, due: time.Now().Add(time.Duration(f.latency.Load()))}
			select {
			case chunks <- c:
			case <-l.dead:
				return
			}
			if err != nil {
				return
			}
		}
	})
	for c := range chunks {
		if wait := time.Until(c.due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.dead:
				t.Stop()
				return
			}
		}
		if len(c.data) > 0 {
			if !f.waitOpen(l) {
				return
			}
			if _, werr := dst.Write(c.data); werr != nil {
				f.kill(l, false)
				return
			}
		}
		if c.err != nil {
			f.ended(l, dst, c.err)
			return
		}
	}
}

// kill closes both sides of l, once: abruptly, or in an orderly way when
// both directions have ended cleanly (so that no byte still in flight is
// lost to a reset).
func (f *Forwarder) kill(l *link, graceful bool) {
	l.once.Do(func() {
		f.mu.Lock()
		close(l.dead)
		server := l.server
		f.mu.Unlock()
		l.cancel()
		end := abort
		if graceful {
			end = func(c net.Conn) { _ = c.Close() }
		}
		end(l.client)
		if server != nil {
			end(server)
		}
	})
}

// abort closes c with a reset instead of an orderly shutdown where it can.
func abort(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
