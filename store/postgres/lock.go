package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/kv"
)

const (
	// lockRecheckMin and lockRecheckMax bound the safety re-check of a
	// blocked Lock between notifications.
	lockRecheckMin = 10 * time.Millisecond
	lockRecheckMax = 2 * time.Second
)

// locker implements store.Locker for one key. held is guarded by s.mu.
type locker struct {
	s   *Store
	key string
	kv.LockSpec

	held *heldLock // current acquisition, nil if none
}

// heldLock is one acquisition: the row at key whose lock_id is id. Its
// fields are guarded by s.mu.
type heldLock struct {
	key, id string
	idx     uint64 // index of the acquisition

	// While pending the acquisition is in flight: verify records a resync
	// or a notification on key meanwhile (checked against the row once the
	// acquisition returns).
	pending bool
	verify  bool

	lost     chan struct{} // closed on release, whatever the cause
	released bool
	deadline time.Time   // local time before which the row cannot expire
	timer    *time.Timer // closes lost at deadline
}

// NewLock returns a Locker for key, not held. opts.TTL defaults to
// defaultLockTTL. See Lock and Unlock for the semantics.
func (s *Store) NewLock(ctx context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	k, _, done, err := s.beginKey(ctx, key)
	if err != nil {
		return nil, err
	}
	done()

	return &locker{s: s, key: k, LockSpec: kv.NewLockSpec(opts, defaultLockTTL, minTTL)}, nil
}

// Lock blocks until the lock is acquired, ctx is done (nil, ctx.Err()) or
// the handle closes (nil, errClosed). A lock is free when its key does not
// exist, is not a lock, or has expired. On success the lock value is
// written at the key, owned by this handle, and the returned channel is
// closed when the lock is lost: Unlock, expiry, or the key being deleted
// or overwritten. The handle renews the lock while it is open and
// RenewLock (if any) is open; afterwards it expires one TTL later. A
// blocked Lock is woken by the notification of the key's release or
// expiry, and re-checks at least every 2s.
func (l *locker) Lock(ctx context.Context) (<-chan struct{}, error) {
	s := l.s

	for {
		c, done, err := s.begin(ctx)
		if err != nil {
			return nil, err
		}

		h, wake, err := s.prepareLock(l)
		if err != nil {
			done()

			return nil, err
		}

		sent := time.Now()

		var idx, leftMs *int64

		stmt, err := s.execTracked(c, func(ctx context.Context, conn *pgxpool.Conn) error {
			return conn.QueryRow(ctx, s.q.lock, l.key, l.Value, ttlMillis(l.TTL), s.id, h.id).Scan(&idx, &leftMs)
		})
		done()

		if err != nil {
			s.abandonLock(l, h, stmt)

			return nil, s.fail(ctx, "lock", err)
		}

		if idx != nil {
			return s.confirmLock(l, h, uint64(*idx), sent), nil
		}

		s.dropPending(h)

		wait := lockRecheckMin
		if leftMs != nil {
			wait = min(max(time.Duration(*leftMs)*time.Millisecond, lockRecheckMin), lockRecheckMax)
		}

		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()

			return nil, ctx.Err()
		case <-s.ctx.Done():
			t.Stop()

			return nil, errClosed
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// prepareLock registers a pending acquisition by l and returns it with a
// channel closed at the next event on the key.
func (s *Store) prepareLock(l *locker) (*heldLock, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	if l.held != nil && !l.held.released {
		return nil, nil, errAlreadyLocked
	}

	wake := s.waiters.Chan(l.key)

	h := &heldLock{key: l.key, id: newID(), pending: true, lost: make(chan struct{})}

	set := s.held[l.key]
	if set == nil {
		set = make(map[*heldLock]struct{})
		s.held[l.key] = set
	}
	set[h] = struct{}{}

	return h, wake, nil
}

func (s *Store) dropPending(h *heldLock) {
	s.mu.Lock()
	defer s.mu.Unlock()

	s.unregisterLocked(h)
}

func (s *Store) unregisterLocked(h *heldLock) {
	set := s.held[h.key]
	delete(set, h)

	if len(set) == 0 {
		delete(s.held, h.key)
	}

	delete(s.heldByID, h.id)
}

// abandonLock handles a failed acquisition statement: it may have
// committed, or still commit (it runs on after its caller gave up until
// stmt closes), so the row is released in the background once the
// statement is over.
func (s *Store) abandonLock(l *locker, h *heldLock, stmt <-chan struct{}) {
	s.dropPending(h)

	q := s.q.unlockKeep
	if l.DeleteOnUnlock {
		q = s.q.unlockDelete
	}

	s.spawn(func() {
		select {
		case <-stmt:
		case <-s.ctx.Done():
			return
		}

		ctx, cancel := context.WithTimeout(s.ctx, s.st.connectTimeout)
		defer cancel()

		_, _ = s.execRows(ctx, q, l.key, h.id)
	})
}

// confirmLock turns a pending acquisition into a held lock and returns its
// lost channel. sent is when the acquisition was sent: the row cannot
// expire before sent + TTL.
func (s *Store) confirmLock(l *locker, h *heldLock, idx uint64, sent time.Time) <-chan struct{} {
	s.mu.Lock()
	h.pending = false
	h.idx = idx
	l.held = h
	s.heldByID[h.id] = h
	h.deadline = sent.Add(l.TTL)
	h.timer = time.AfterFunc(time.Until(h.deadline), func() { s.expireLock(h) })

	verify := h.verify && !h.released
	s.mu.Unlock()

	if verify {
		if alive, err := s.liveLocks([]string{h.id}); err == nil && !alive[h.id] {
			s.mu.Lock()
			s.loseLocked(h)
			s.mu.Unlock()
		}
	}

	s.scheduleHeartbeat(sent.Add(l.TTL/3), l.TTL)

	if l.Renew != nil {
		renew := l.Renew
		s.spawn(func() { s.stopRenewal(h, renew) })
	}

	return h.lost
}

// loseLocked releases h: its lost channel closes. Must be called with s.mu
// held.
func (s *Store) loseLocked(h *heldLock) {
	if h.released {
		return
	}

	h.released = true
	close(h.lost)

	if h.timer != nil {
		h.timer.Stop()
	}

	s.unregisterLocked(h)
}

// expireLock is the deadline timer of h: without a renewal seen in time,
// the row may have expired and someone else may hold the lock.
func (s *Store) expireLock(h *heldLock) {
	s.mu.Lock()
	defer s.mu.Unlock()

	if time.Now().Before(h.deadline) {
		return // extended meanwhile
	}

	s.loseLocked(h)
}

// extendLock pushes the deadline of lock id to deadline.
func (s *Store) extendLock(id string, deadline time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()

	h := s.heldByID[id]
	if h == nil || h.released || !deadline.After(h.deadline) {
		return
	}

	h.deadline = deadline
	h.timer.Reset(time.Until(deadline))
}

// stopRenewal hands h over to its TTL once the caller closes renew: the
// owner is cleared and the row expires one TTL later.
func (s *Store) stopRenewal(h *heldLock, renew <-chan struct{}) {
	select {
	case <-renew:
	case <-h.lost:
		return
	case <-s.ctx.Done():
		return
	}

	backoff := 50 * time.Millisecond

	for !s.tryStopRenewal(h) {
		t := time.NewTimer(backoff)
		select {
		case <-h.lost:
			t.Stop()

			return
		case <-s.ctx.Done():
			t.Stop()

			return
		case <-t.C:
		}

		backoff = min(2*backoff, 2*time.Second)
	}
}

func (s *Store) tryStopRenewal(h *heldLock) bool {
	ctx, cancel := context.WithTimeout(s.ctx, s.st.connectTimeout)
	defer cancel()

	sent := time.Now()

	var ms int64

	err := s.queryRow(ctx, s.q.stopRenew, []any{h.id}, &ms)
	if err == nil {
		s.extendLock(h.id, sent.Add(time.Duration(ms)*time.Millisecond))
	}

	// No row: gone already, and its notification releases h.
	return err == nil || errors.Is(err, pgx.ErrNoRows)
}

// Unlock releases the lock. With DeleteOnUnlock the key is deleted,
// otherwise its value stays and becomes persistent (a modification with a
// new index). It returns errNotLocked when the lock is not held.
func (l *locker) Unlock(ctx context.Context) error {
	s := l.s

	c, done, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer done()

	s.mu.Lock()
	h := l.held
	wasLost := h != nil && h.released
	s.mu.Unlock()

	if h == nil {
		return errNotLocked
	}

	q := s.q.unlockKeep
	if l.DeleteOnUnlock {
		q = s.q.unlockDelete
	}

	n, err := s.execRows(c, q, l.key, h.id)
	if err != nil {
		return s.fail(ctx, "unlock", err)
	}

	s.mu.Lock()
	s.loseLocked(h)
	if l.held == h {
		l.held = nil
	}
	s.mu.Unlock()

	if wasLost || n == 0 {
		return errNotLocked
	}

	return nil
}
