package leadership

import (
	"bytes"
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
func EndElection(ctx context.Context, client Backend, key string) error {
	_, _, err := endElection(ctx, client, key)
	return err
}

// endElection writes the ended record and returns it as stored, with the
// TTL of the leader it displaced (0 when no one led).
func endElection(ctx context.Context, client Backend, key string) (*store.KVPair, time.Duration, error) {
	if isNil(client) {
		return nil, 0, ErrNilStore
	}
	if key = normalizeKey(key); key == "" {
		return nil, 0, ErrEmptyKey
	}
	for {
		pair, err := getKey(ctx, client, key)
		next := record{Gen: 1, Ended: true}
		switch {
		case errors.Is(err, store.ErrKeyNotFound):
			pair = nil
		case err != nil:
			return nil, 0, &StoreError{Op: "end", Key: key, Err: err}
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
		value := next.stamp()
		ok, stored, err := casKey(ctx, client, key, value, pair)
		switch {
		case err == nil && ok:
			if stored == nil || !bytes.Equal(stored.Value, value) {
				// The store did not return our write: read it back.
				if stored, err = getKey(ctx, client, key); err != nil {
					return nil, 0, &StoreError{Op: "end", Key: key, Err: err}
				}
			}
			return stored, next.ttl(), nil
		case err != nil && !isConflict(err):
			return nil, 0, &StoreError{Op: "end", Key: key, Err: err}
		case ctx.Err() != nil:
			return nil, 0, &StoreError{Op: "end", Key: key, Err: ctx.Err()}
		}
	}
}

// endNotice is how long DeleteElection leaves the ended record in place at
// least, so that every participant reads it before the key vanishes even if
// its watch missed the change: with default options followers read the key
// every 3s and candidates every TTL while their watch works. A participant
// that never saw the ended record takes the vanished key for a store that
// lost its data, and carries on.
const endNotice = 3*time.Second + 500*time.Millisecond

// DeleteElection ends the election at key (as EndElection) and then deletes
// the key (Comcast's DeleteElection). It leaves the ended record in place
// long enough for every participant to see it (3.5s, or the last leader's
// TTL if longer, so that no candidate started afterwards can lead while the
// old leader may still act), then deletes it. It deletes only the ended
// record it wrote: if a candidate opened a new election on the key
// meanwhile, that one is ended in turn. Fencing tokens of an election
// opened after the deletion start again from 1: prefer EndElection where
// tokens guard a resource.
func DeleteElection(ctx context.Context, client Backend, key string) error {
	for {
		ended, ttl, err := endElection(ctx, client, key)
		if err != nil {
			return err
		}
		t := time.NewTimer(max(ttl, endNotice))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return &StoreError{Op: "delete", Key: normalizeKey(key), Err: ctx.Err()}
		}
		ok, err := casDelete(ctx, client, normalizeKey(key), ended)
		switch {
		case err == nil && ok, errors.Is(err, store.ErrKeyNotFound):
			return nil
		case err != nil && !isConflict(err):
			return &StoreError{Op: "delete", Key: normalizeKey(key), Err: err}
		case ctx.Err() != nil:
			return &StoreError{Op: "delete", Key: normalizeKey(key), Err: ctx.Err()}
		}
		// Reopened meanwhile: end it again.
	}
}
