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
		prev, err := readKey(ctx, client, key)
		if err != nil {
			return nil, 0, &storeFailure{Op: "end", Key: key, Err: err}
		}
		next := endedRecord(prev)
		r, err := casRecord(ctx, client, key, &next, prev.pair, func() (snapshot, error) {
			return readKey(ctx, client, key)
		})
		switch {
		case err != nil:
			return nil, 0, &storeFailure{Op: "end", Key: key, Err: err}
		case r.landed && r.pair == nil && r.later.kind == snapMissing:
			return nil, 0, &storeFailure{Op: "end", Key: key, Err: store.ErrKeyNotFound}
		case r.landed && r.pair == nil:
			return r.later.pair, next.TTL(), nil
		case r.landed:
			return r.pair, next.TTL(), nil
		case ctx.Err() != nil:
			return nil, 0, &storeFailure{Op: "end", Key: key, Err: ctx.Err()}
		}
	}
}

// endedRecord is the record that ends the election shown by prev: the next
// generation, ended, naming no one. The term counter stays, and so does the
// last holder's TTL, which a new election waits out.
func endedRecord(prev snapshot) record {
	if prev.kind != snapRecord {
		return record{Gen: 1, Ended: true}
	}
	next := prev.rec
	if next.Free() && !next.Ended {
		next.TTLms = 0
	}
	next.Gen++
	next.Seq++
	next.Ended = true
	next.Leader, next.ID, next.Since, next.Value = "", "", "", ""
	next.Successor, next.SuccessorMs, next.SeqJumps = "", 0, false
	return next
}

// endNotice is how long DeleteElection leaves the ended record in place at
// least, so that every participant reads it before the key vanishes even if
// its watch missed the change: with default options, while their watch
// works, followers read the key within 3s (or half the holder's TTL, if
// longer) and candidates within half their TTL of the last change they
// were shown, which leaves a watch event half a second (followers) or
// half a TTL (candidates) to arrive late. A participant that never saw
// the ended record takes the vanished key for a store that lost its data,
// and carries on.
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
//
// The delete compares the record's value as well as its index where the
// store's AtomicDelete does (every adapter of this module: see
// docs/backends.md), so that a record another candidate wrote at the same
// index, after the store lost its data and handed indexes out again, is
// not taken for the ended one. A plain valkeyrie store that compares the
// index only may delete such a record.
func DeleteElection(ctx context.Context, client Backend, key string) error {
	return deleteElection(ctx, systemClock{}, client, key)
}

// deleteElection is DeleteElection timed on clk.
func deleteElection(ctx context.Context, clk timeSource, client Backend, key string) error {
	for {
		ended, ttl, err := endElection(ctx, client, key)
		if err != nil {
			return err
		}
		t := clk.NewTimer(max(ttl, endNotice))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return &storeFailure{Op: "delete", Key: normalizeKey(key), Err: ctx.Err()}
		}
		ok, err := casDelete(ctx, client, normalizeKey(key), ended)
		switch {
		case err == nil && ok, errors.Is(err, store.ErrKeyNotFound):
			return nil
		case err != nil && !isConflict(err):
			return &storeFailure{Op: "delete", Key: normalizeKey(key), Err: err}
		case ctx.Err() != nil:
			return &storeFailure{Op: "delete", Key: normalizeKey(key), Err: ctx.Err()}
		}
		// Reopened meanwhile: end it again.
	}
}
