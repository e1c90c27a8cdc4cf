package memory

import (
	"context"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/kv"
)

// locker implements store.Locker for one key. Its fields after
// construction are guarded by s.b.mu.
type locker struct {
	s   *Store
	key string
	kv.LockSpec

	held *lockState // current acquisition, nil if never acquired
}

// lockState is one acquisition of a lock. Guarded by b.mu.
type lockState struct {
	lost         chan struct{} // closed on release, whatever the cause
	released     bool
	renewStopped bool // the caller closed RenewLock
}

// releaseLock marks ls released, closes its lost channel and wakes the
// Lock calls waiting on key. Must be called with b.mu held.
func (b *backend) releaseLock(key string, ls *lockState) {
	if ls.released {
		return
	}

	ls.released = true
	close(ls.lost)

	b.waiters.Wake(key)
}

// NewLock returns a Locker for key, not held. opts.TTL defaults to
// defaultLockTTL. See Lock and Unlock for the semantics.
func (s *Store) NewLock(ctx context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return nil, err
	}
	defer s.b.mu.Unlock()

	return &locker{s: s, key: k, LockSpec: kv.NewLockSpec(opts, defaultLockTTL, minTTL)}, nil
}

// Lock blocks until the lock is acquired, ctx is done (nil, ctx.Err()) or
// the handle becomes unreachable (nil, an error wrapping
// store.ErrNotReachable). On success the lock value is written at the key
// and the returned channel is closed when the lock is lost: Unlock, TTL
// expiry, or the key being deleted or overwritten. The lock is kept alive
// while the handle is open and connected and RenewLock (if any) is open;
// afterwards it expires one TTL later.
func (l *locker) Lock(ctx context.Context) (<-chan struct{}, error) {
	s, b := l.s, l.s.b

	for {
		if err := s.enter(ctx); err != nil {
			return nil, err
		}

		e := b.lookup(l.key)

		if l.held != nil && !l.held.released {
			b.mu.Unlock()

			return nil, errAlreadyLocked
		}

		if e == nil || e.lock == nil {
			ls := &lockState{lost: make(chan struct{})}
			b.set(s, l.key, l.Value, l.TTL, true, ls)
			l.held = ls

			if l.Renew != nil {
				s.wg.Add(1)
				go l.watchRenew(ls)
			}

			b.mu.Unlock()

			return ls.lost, nil
		}

		released, state := b.waiters.Chan(l.key), b.stateCh
		b.mu.Unlock()

		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-released:
		case <-state:
		}
	}
}

// watchRenew stops the keep-alive of ls once the caller closes RenewLock.
func (l *locker) watchRenew(ls *lockState) {
	defer l.s.wg.Done()

	select {
	case <-l.Renew:
	case <-ls.lost:
		return
	case <-l.s.closedCh:
		return
	}

	b := l.s.b
	b.mu.Lock()
	defer b.mu.Unlock()

	if ls.released {
		return
	}

	ls.renewStopped = true
	if e := b.entries[l.key]; e != nil && e.lock == ls {
		b.syncTimer(e)
	}
}

// Unlock releases the lock. With DeleteOnUnlock the key is deleted,
// otherwise its value stays and becomes persistent (a modification with a
// new index). It returns errNotLocked when the lock is not held.
func (l *locker) Unlock(ctx context.Context) error {
	s, b := l.s, l.s.b

	if err := s.enter(ctx); err != nil {
		return err
	}
	defer b.mu.Unlock()

	ls := l.held
	l.held = nil

	e := b.lookup(l.key)
	if ls == nil || e == nil || e.lock != ls {
		return errNotLocked
	}

	if l.DeleteOnUnlock {
		b.publish(b.remove(e))
	} else {
		b.set(nil, l.key, e.value, 0, false, nil)
	}

	return nil
}
