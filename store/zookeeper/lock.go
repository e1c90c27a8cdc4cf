package zookeeper

import (
	"context"
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"
)

// NewLock returns a lock on key with ZooKeeper's lock recipe (ephemeral
// sequential children of key), as kvtools/zookeeper does: once acquired,
// opts.Value is written to key, and the lock is reported lost when key's
// value is changed by someone else, the session expires, or the store
// closes. Liveness is the session's: opts.TTL, RenewLock and DeleteOnUnlock
// are not used. Elections do not use locks.
func (s *kv) NewLock(_ context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	p, err := path(key)
	if err != nil {
		return nil, err
	}
	value := []byte{}
	if opts != nil && opts.Value != nil {
		value = opts.Value
	}
	c := s.cur.Load()
	return &lock{s: s, path: p, value: value, c: c, zl: zk.NewLock(c.conn, p, s.acl)}, nil
}

type lock struct {
	s     *kv
	path  string
	value []byte

	mu     sync.Mutex
	c      *client // zl's
	zl     *zk.Lock
	held   bool
	cancel context.CancelFunc // stops the monitor
}

// Lock blocks until the lock is acquired or ctx ends. If ctx ends first,
// an acquisition still in progress is undone in the background.
func (l *lock) Lock(ctx context.Context) (<-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return nil, zk.ErrDeadlock
	}
	if c := l.s.cur.Load(); c != l.c {
		// The store replaced its session: the recipe starts over on the
		// new one.
		l.c, l.zl = c, zk.NewLock(c.conn, l.path, l.s.acl)
	}
	done := make(chan error, 1)
	zl, c := l.zl, l.c
	l.s.tasks.Go(func() { done <- zl.Lock() })
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// Give the lock up when (if) it is acquired; a fresh zk.Lock for
		// the next attempt.
		l.zl = zk.NewLock(c.conn, l.path, l.s.acl)
		l.s.tasks.Go(func() {
			if <-done == nil {
				_ = zl.Unlock()
			}
		})
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, l.s.fail("lock", err)
	}
	if _, err := c.conn.Set(l.path, l.value, -1); err != nil {
		_ = zl.Unlock()
		return nil, l.s.fail("lock", err)
	}
	lost := make(chan struct{})
	mctx, cancel := l.s.merge(ctx)
	l.held, l.cancel = true, cancel
	l.s.tasks.Go(func() { l.monitor(mctx, c, lost) })
	return lost, nil
}

// monitor closes lost when the lock's value changes, the session expires
// or is replaced, or the store closes.
func (l *lock) monitor(ctx context.Context, c *client, lost chan struct{}) {
	defer close(lost)
	for {
		_, _, ev, err := c.conn.GetW(l.path)
		if err != nil {
			return
		}
		select {
		case e := <-ev:
			if e.Type == zk.EventNotWatching || e.Type == zk.EventNodeDataChanged || e.Type == zk.EventNodeDeleted {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// Unlock releases the lock.
func (l *lock) Unlock(_ context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return zk.ErrNotLocked
	}
	l.held = false
	l.cancel()
	err := l.zl.Unlock()
	if errors.Is(err, zk.ErrNoNode) || (isConnErr(err) && l.s.cur.Load() != l.c) {
		err = nil // gone, or gone with the session the store replaced
	}
	return l.s.fail("unlock", err)
}
