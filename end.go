package leadership

import (
	"context"
	"errors"
	"time"

	"github.com/kvtools/valkeyrie/store"
)

// EndElection ends the election at key for every candidate and follower of
// it (Comcast's EndElection): each is told with ErrElectionEnded on its
// error channel, steps down if it leads, and closes its channels. The record
// keeps its term counter, so fencing tokens keep growing if the election is
// opened again: a candidate that starts after the end opens a new election
// on the same key, and waits out the last leader's TTL before leading.
func EndElection(ctx context.Context, client store.Store, key string) error {
	_, err := endElection(ctx, client, key)
	return err
}

// endElection writes the ended record and returns the TTL of the leader it
// displaced (0 when no one led).
func endElection(ctx context.Context, client store.Store, key string) (time.Duration, error) {
	if isNil(client) {
		return 0, ErrNilStore
	}
	if key = normalizeKey(key); key == "" {
		return 0, ErrEmptyKey
	}
	for {
		pair, err := client.Get(ctx, key, &store.ReadOptions{Consistent: true})
		next := record{Gen: 1, Ended: true}
		switch {
		case errors.Is(err, store.ErrKeyNotFound):
			pair = nil
		case err != nil:
			return 0, &StoreError{Op: "end", Key: key, Err: err}
		default:
			if s := snapshotOf(pair); s.kind == snapRecord {
				next = s.rec
				if s.rec.free() && !s.rec.Ended {
					next.TTLms = 0
				}
				next.Gen++
				next.Seq++
				next.Ended = true
				next.Leader, next.ID, next.Since = "", "", ""
				// TTLms stays: a new election waits out the last holder's lease.
			}
		}
		ok, _, err := client.AtomicPut(ctx, key, next.stamp(), pair, nil)
		switch {
		case err == nil && ok:
			return next.ttl(), nil
		case err != nil && !isConflict(err):
			return 0, &StoreError{Op: "end", Key: key, Err: err}
		case ctx.Err() != nil:
			return 0, &StoreError{Op: "end", Key: key, Err: ctx.Err()}
		}
	}
}

// DeleteElection ends the election at key (as EndElection) and then deletes
// the key (Comcast's DeleteElection). If someone led when it ended, it waits
// out that leader's TTL before deleting, so that no candidate started
// afterwards can lead while the old leader may still act. Fencing tokens of
// an election opened later on the same key start again from 1: prefer
// EndElection where tokens guard a resource.
func DeleteElection(ctx context.Context, client store.Store, key string) error {
	ttl, err := endElection(ctx, client, key)
	if err != nil {
		return err
	}
	if ttl > 0 {
		t := time.NewTimer(ttl)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return &StoreError{Op: "delete", Key: normalizeKey(key), Err: ctx.Err()}
		}
	}
	err = client.Delete(ctx, normalizeKey(key))
	if err != nil && !errors.Is(err, store.ErrKeyNotFound) {
		return &StoreError{Op: "delete", Key: normalizeKey(key), Err: err}
	}
	return nil
}
