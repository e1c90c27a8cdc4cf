package zookeeper

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/leadership-go/leadership/store/internal/watch"
)

// client is one zk client: one zk.Conn, the session it holds or resumes,
// and the connections it dials. A store replaces its client when the
// session cannot be resumed (see monitor).
type client struct {
	conn    *zk.Conn
	events  <-chan zk.Event
	dialer  *dialer
	closing atomic.Bool // set when close begins

	mu     sync.Mutex
	had    bool          // the client had a session once
	has    bool          // it has one now
	lostAt time.Time     // when it last lost it
	lost   chan struct{} // capacity 1: the session was lost
}

// newClient starts a zk client on st's endpoints; it connects in the
// background.
func newClient(st settings) (*client, error) {
	perDial := max(time.Second, st.dialTimeout/time.Duration(len(st.endpoints)))
	c := &client{dialer: newDialer(min(perDial, st.dialTimeout), st.tls, len(st.endpoints)), lost: make(chan struct{}, 1)}
	conn, events, err := zk.Connect(st.endpoints, st.sessionTimeout,
		zk.WithEventCallback(c.event),
		zk.WithHostProvider(&hostProvider{}),
		zk.WithDialer(c.dialer.dial),
		zk.WithLogger(zkLogger{secret: st.password}),
		zk.WithLogInfo(false),
	)
	if err != nil {
		c.dialer.close()
		return nil, fmt.Errorf("%w: %w", errInvalidConfig, err)
	}
	c.conn, c.events = conn, events
	return c, nil
}

// event is the zk client's event callback: it follows the session's state.
func (c *client) event(ev zk.Event) {
	// See close: once it has begun, the client's loop pauses here on its
	// way out, so that zk's close request is queued before the loop
	// answers the requests it did not send.
	if c.closing.Load() && ev.Type == zk.EventSession && ev.State == zk.StateDisconnected {
		time.Sleep(5 * time.Millisecond)
	}
	if ev.Type != zk.EventSession {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case ev.State == zk.StateHasSession:
		c.had, c.has = true, true
	case c.has:
		c.has, c.lostAt = false, time.Now()
		select {
		case c.lost <- struct{}{}:
		default:
		}
	}
}

// sessionLostFor returns how long the client has been without the session
// it had, or 0 if it has one or never had one.
func (c *client) sessionLostFor() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.has || !c.had {
		return 0
	}
	return time.Since(c.lostAt)
}

// close ends the session if there is one (its ephemeral nodes and locks
// go at once), breaks the connection, and waits up to closeGrace for the
// client's goroutines.
func (c *client) close() {
	if c.conn.State() == zk.StateHasSession {
		// End the session gracefully: zk waits up to 1s for the server's
		// answer.
		c.conn.Close()
		c.dialer.close()
	} else {
		// No session to end. zk's Close queues a close request and waits
		// up to 1s for its answer, which comes (as an error) only if the
		// client's loop is then between connection attempts and notices
		// the close after the request was queued. So: break the connection
		// first (which also frees a client stuck in a handshake with a
		// hung server), let the loop fail its next dial at once (the dialer
		// is closed) and wait between rounds, then close; the event
		// callback makes the loop pause before it answers what it did not
		// send (see event).
		c.closing.Store(true)
		c.dialer.close()
		for i := 0; i < 100 && c.conn.State() != zk.StateConnecting; i++ {
			time.Sleep(time.Millisecond)
		}
		c.conn.Close()
	}
	// The client closes its event channel when its last goroutine ends.
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	for {
		select {
		case _, ok := <-c.events:
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}

// zc returns the zk client of the store's current session.
func (s *kv) zc() *zk.Conn { return s.cur.Load().conn }

// monitor replaces the store's client when its session has been lost for
// longer than the session timeout: by then the ensemble has expired it,
// and a server normally says so when the client reconnects, upon which
// the zk client opens a new session by itself. A server that lost its
// data (restarted empty, restored from an older snapshot) says nothing of
// the kind: it refuses every attempt to resume a session that has seen
// transactions it does not have ("Refusing session request ... has seen
// zxid ..."), and the zk client would retry forever. A new client starts
// over with no session and no zxid, which any server accepts. This is what
// Curator calls a simulated session expiration. Watches follow the store
// to the new client; locks of the old session are lost.
func (s *kv) monitor() {
	for {
		c := s.cur.Load()
		select {
		case <-s.ctx.Done():
			return
		case <-c.lost:
		}
		for {
			lost := c.sessionLostFor()
			if lost == 0 {
				break // back
			}
			if lost >= s.st.sessionTimeout {
				s.replace(c)
				break
			}
			t := time.NewTimer(s.st.sessionTimeout - lost)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// replace makes a new client the store's current one and closes old.
func (s *kv) replace(old *client) {
	s.swapMu.Lock()
	if s.ctx.Err() != nil || s.cur.Load() != old {
		s.swapMu.Unlock()
		return
	}
	c, err := newClient(s.st)
	if err != nil { // the settings were accepted once: cannot happen
		s.swapMu.Unlock()
		return
	}
	s.cur.Store(c)
	s.replaced.Add(1)
	s.swapMu.Unlock()
	if s.st.username != "" {
		s.tasks.Go(func() { s.authenticate(c) })
	}
	old.close() // its watches fire EventNotWatching: watches read again on c
}

// authenticate adds the store's credentials to c's session, retrying until
// it succeeds, c is replaced or the store closes. (zk sends them again by
// itself after a reconnection of the same client.)
func (s *kv) authenticate(c *client) {
	backoff := 50 * time.Millisecond
	for s.ctx.Err() == nil && s.cur.Load() == c {
		if err := c.conn.AddAuth("digest", []byte(s.st.username+":"+s.st.password)); err == nil {
			return
		}
		if !watch.Sleep(s.ctx, backoff) {
			return
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// replacements returns how many times the store replaced its client (for
// tests).
func (s *kv) replacements() int64 { return s.replaced.Load() }
