package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// purgeSafety bounds the time between two purges even when no expiry is
	// known (a notification may have been missed).
	purgeSafety = 30 * time.Second

	// purgeRetry is how soon a failed purge is retried.
	purgeRetry = 500 * time.Millisecond
)

// scheduleHeartbeat asks for a heartbeat at t at the latest; ttl is the TTL
// of the row that needs it.
func (s *Store) scheduleHeartbeat(t time.Time, ttl time.Duration) {
	s.mu.Lock()
	if s.hbAt.IsZero() || t.Before(s.hbAt) {
		s.hbAt = t
	}

	if s.hbTTL == 0 || ttl < s.hbTTL {
		s.hbTTL = ttl
	}
	s.mu.Unlock()

	s.wake()
}

// schedulePurge asks for a purge of expired rows at t at the latest.
func (s *Store) schedulePurge(t time.Time) {
	s.mu.Lock()
	s.schedulePurgeLocked(t)
	s.mu.Unlock()
}

func (s *Store) schedulePurgeLocked(t time.Time) {
	if s.purgeAt.IsZero() || t.Before(s.purgeAt) {
		s.purgeAt = t
		s.wake()
	}
}

func (s *Store) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// keep is the handle's keeper goroutine. It renews the rows this handle
// owns (one UPDATE per heartbeat, every TTL/3 of the smallest TTL owned)
// and purges expired rows when the earliest expiry is due (one DELETE,
// whose deletions the trigger notifies). Any handle may purge.
func (s *Store) keep() {
	defer s.wg.Done()

	timer := time.NewTimer(purgeSafety)
	defer timer.Stop()

	for {
		now := time.Now()

		s.mu.Lock()
		doHB := !s.hbAt.IsZero() && !now.Before(s.hbAt)
		if doHB {
			s.hbAt = time.Time{}
		}

		doPurge := !s.purgeAt.IsZero() && !now.Before(s.purgeAt)
		if doPurge {
			s.purgeAt = time.Time{}
		}
		s.mu.Unlock()

		if doHB {
			s.heartbeat()
		}

		if doPurge {
			s.purge()
		}

		s.mu.Lock()
		next := s.purgeAt
		if !s.hbAt.IsZero() && (next.IsZero() || s.hbAt.Before(next)) {
			next = s.hbAt
		}
		s.mu.Unlock()

		wait := purgeSafety
		if !next.IsZero() {
			wait = time.Until(next)
		}

		if wait <= 0 {
			continue
		}

		timer.Reset(wait)

		select {
		case <-s.ctx.Done():
			return
		case <-s.kick:
		case <-timer.C:
		}
	}
}

// heartbeat renews every live row this handle owns and pushes back the
// local deadlines of its locks.
func (s *Store) heartbeat() {
	s.mu.Lock()
	ttl := s.hbTTL
	s.mu.Unlock()

	timeout := min(max(ttl, time.Second), s.st.connectTimeout)
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()

	sent := time.Now()

	var (
		minMs   int64
		renewed = map[string]time.Duration{}
	)

	err := s.queryAll(ctx, s.q.heartbeat, []any{s.id}, func(rows pgx.Rows) error {
		var (
			ms     int64
			lockID *string
		)

		if err := rows.Scan(&ms, &lockID); err != nil {
			return err
		}

		if minMs == 0 || ms < minMs {
			minMs = ms
		}

		if lockID != nil {
			renewed[*lockID] = time.Duration(ms) * time.Millisecond
		}

		return nil
	})
	if err != nil {
		s.heartbeatFailed(ttl)

		return
	}

	for id, d := range renewed {
		s.extendLock(id, sent.Add(d))
	}

	s.mu.Lock()
	s.hbTTL = 0
	s.mu.Unlock()

	if minMs > 0 {
		d := time.Duration(minMs) * time.Millisecond
		s.scheduleHeartbeat(sent.Add(d/3), d)
	}
}

func (s *Store) heartbeatFailed(ttl time.Duration) {
	retryIn := min(max(ttl/6, 10*time.Millisecond), time.Second)
	s.scheduleHeartbeat(time.Now().Add(retryIn), ttl)
}

// purge deletes the expired rows and schedules the next purge at the
// earliest remaining expiry.
func (s *Store) purge() {
	ctx, cancel := context.WithTimeout(s.ctx, s.st.connectTimeout)
	defer cancel()

	var (
		n      int64
		nextMs *int64
	)

	err := s.queryRow(ctx, s.q.purge, nil, &n, &nextMs)

	var next *int64
	if err == nil { // else the scan may still be running: f can outlive a failed call
		next = nextMs
	}

	s.schedulePurge(s.nextPurge(err, next))
}
