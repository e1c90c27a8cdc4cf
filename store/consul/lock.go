package consul

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/watch"
)

// defaultLockTTL is the lock TTL when LockOptions.TTL is zero (kvtools').
const defaultLockTTL = 20 * time.Second

var (
	// errLockHeld is Lock's error when this Locker already holds the lock:
	// it matches store.ErrAlreadyLocked.
	errLockHeld = adapter.Sentinel("consul: lock already held by this locker", lstore.ErrAlreadyLocked)
	// errLockNotHeld is Unlock's error when this Locker does not hold the
	// lock: it matches store.ErrNotLocked.
	errLockNotHeld = adapter.Sentinel("consul: lock not held", lstore.ErrNotLocked)
)

// NewLock returns a lock on key built on a Consul session, as kvtools'
// is: the session has TTL opts.TTL/2 (Consul invalidates a session up to
// twice its TTL after the last renewal, so the lock is lost within
// opts.TTL of its holder vanishing) and is renewed in the background;
// opts.Value is written to key while it is held. Stock agents refuse
// session TTLs under 10s, so opts.TTL must then be 20s or more. With
// DeleteOnUnlock the key is deleted on Unlock and when the session
// expires; otherwise it is released. RenewLock is not used. Unlike
// kvtools', Lock honours its context and every goroutine ends with Unlock
// or Close. Elections do not use locks.
func (s *kv) NewLock(_ context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	k, err := normalize(key)
	if err != nil {
		return nil, err
	}
	l := &lock{s: s, key: k, ttl: defaultLockTTL}
	if opts != nil {
		if opts.TTL > 0 {
			l.ttl = opts.TTL
		}
		l.value, l.deleteOnUnlock = opts.Value, opts.DeleteOnUnlock
	}
	return l, nil
}

type lock struct {
	s              *kv
	key            string
	value          []byte
	ttl            time.Duration
	deleteOnUnlock bool

	mu      sync.Mutex
	session string             // while held
	stop    context.CancelFunc // ends the renewal and the monitor
}

// bounded gives ctx the store's request timeout if it has no deadline.
func (s *kv) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.requestTimeout)
}

// Lock blocks until the lock is held or ctx ends. The channel returned
// closes when the lock is lost (its session invalidated, the key changed
// hands or was deleted), released by Unlock, or the store closes.
func (l *lock) Lock(ctx context.Context) (<-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session != "" {
		return nil, errLockHeld
	}
	behavior := api.SessionBehaviorRelease
	if l.deleteOnUnlock {
		behavior = api.SessionBehaviorDelete
	}
	rctx, rcancel := l.s.bounded(ctx)
	session, _, err := l.s.client.Session().Create(&api.SessionEntry{
		Name:      "leadership lock " + l.key,
		TTL:       (l.ttl / 2).String(),
		Behavior:  behavior,
		LockDelay: time.Millisecond,
	}, (&api.WriteOptions{}).WithContext(rctx))
	rcancel()
	if err != nil {
		return nil, l.s.fail("lock", err)
	}
	hctx, stop := l.s.merge(context.Background()) // the holding's lifetime
	if !l.s.startTask(func() bool { return true }, func() { l.renew(hctx, stop, session) }) {
		stop()
		l.destroy(session)
		return nil, errClosed
	}
	if err := l.acquire(ctx, session); err != nil {
		stop()
		l.destroy(session)
		return nil, err
	}
	lost := make(chan struct{})
	l.session, l.stop = session, stop
	l.s.mu.Lock()
	l.s.locks[l] = struct{}{}
	l.s.mu.Unlock()
	if !l.s.startTask(func() bool { return true }, func() { l.monitor(hctx, stop, session, lost) }) {
		l.session, l.stop = "", nil
		l.s.mu.Lock()
		delete(l.s.locks, l)
		l.s.mu.Unlock()
		stop()
		l.destroy(session)
		return nil, errClosed
	}
	return lost, nil
}

// acquire takes key with session, waiting with blocking queries while
// someone else holds it.
func (l *lock) acquire(ctx context.Context, session string) error {
	b := blocking{s: l.s}
	for {
		rctx, rcancel := l.s.bounded(ctx)
		ok, _, err := l.s.client.KV().Acquire(&api.KVPair{Key: l.key, Value: l.value, Flags: api.LockFlagValue, Session: session},
			(&api.WriteOptions{}).WithContext(rctx))
		rcancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return l.s.fail("lock", err)
		case ok:
			return nil
		}
		for {
			q, qcancel := b.options(ctx)
			start := time.Now()
			p, meta, err := l.s.watchClient.KV().Get(l.key, q)
			qcancel()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				return l.s.fail("lock", err)
			}
			b.next(ctx, meta.LastIndex, start)
			if p == nil || p.Session == "" {
				break // free (a lock delay may still refuse it: retry soon)
			}
		}
		if !watch.Sleep(ctx, 50*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// renew renews session every quarter of the lock's TTL until ctx ends;
// when the session is gone, it ends the holding.
func (l *lock) renew(ctx context.Context, stop context.CancelFunc, session string) {
	t := time.NewTicker(max(l.ttl/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, rcancel := l.s.bounded(ctx)
		entry, _, err := l.s.client.Session().Renew(session, (&api.WriteOptions{}).WithContext(rctx))
		rcancel()
		if err == nil && entry == nil { // invalidated
			stop()
			return
		}
	}
}

// monitor closes lost when key no longer belongs to session or ctx ends.
func (l *lock) monitor(ctx context.Context, stop context.CancelFunc, session string, lost chan struct{}) {
	defer close(lost)
	defer stop()
	b := blocking{s: l.s}
	for ctx.Err() == nil {
		q, qcancel := b.options(ctx)
		start := time.Now()
		p, meta, err := l.s.watchClient.KV().Get(l.key, q)
		qcancel()
		if err != nil {
			if ctx.Err() == nil {
				watch.Sleep(ctx, time.Second) // a transient error: the session's TTL decides
			}
			continue
		}
		if p == nil || p.Session != session {
			return
		}
		b.next(ctx, meta.LastIndex, start)
	}
}

// destroy ends session (which releases or deletes what it holds).
func (l *lock) destroy(session string) {
	ctx, cancel := context.WithTimeout(context.Background(), l.s.requestTimeout)
	defer cancel()
	_, _ = l.s.client.Session().Destroy(session, (&api.WriteOptions{}).WithContext(ctx))
}

// Unlock releases the lock (deletes the key with DeleteOnUnlock) and ends
// its session.
func (l *lock) Unlock(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.session == "" {
		return errLockNotHeld
	}
	session := l.session
	l.session = ""
	l.stop()
	l.s.mu.Lock()
	delete(l.s.locks, l)
	l.s.mu.Unlock()
	rctx, rcancel := l.s.bounded(ctx)
	defer rcancel()
	var err error
	if l.deleteOnUnlock {
		_, _, err = l.s.txn(rctx, api.TxnOps{
			{KV: &api.KVTxnOp{Verb: api.KVCheckSession, Key: l.key, Session: session}},
			{KV: &api.KVTxnOp{Verb: api.KVDelete, Key: l.key}},
		})
	} else {
		_, _, err = l.s.client.KV().Release(&api.KVPair{Key: l.key, Value: l.value, Flags: api.LockFlagValue, Session: session},
			(&api.WriteOptions{}).WithContext(rctx))
	}
	l.destroy(session)
	return l.s.fail("unlock", err)
}
