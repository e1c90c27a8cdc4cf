package leadership

import (
	"bytes"
	"context"
	"errors"

	"github.com/kvtools/valkeyrie/store"
)

// Where the record is compare-and-swapped: every write of the election
// record, by a candidate (acquire, renew, release) or by EndElection, goes
// through casRecord, so two writers can never both believe their write
// made the change.

// casResult is the outcome of one compare-and-swap of the record.
type casResult struct {
	landed bool          // the store applied the write
	pair   *store.KVPair // the write as stored; nil when the read back shows a later state
	later  snapshot      // that later state, when pair is nil
}

// casRecord stamps next and compare-and-swaps it over prev (nil: create).
// A write that failed because the key changed, appeared or vanished is not
// landed, with no error; a write whose fate the store did not tell is an
// error. When the store applied the write but did not answer with exactly
// what was written (some stores answer with a later read), readBack reads
// the key and the write is recognised by its token. prev is a pair as the
// store gave it, with the record's value: a store that compares the value
// as well as the index (Backend) refuses the write over a record another
// wrote at an index it handed out again after losing its data.
func casRecord(ctx context.Context, client Backend, key string, next *record, prev *store.KVPair, readBack func() (snapshot, error)) (casResult, error) {
	value := next.Stamp()
	ok, pair, err := casKey(ctx, client, key, value, prev)
	switch {
	case err != nil && isConflict(err), err == nil && !ok:
		return casResult{}, nil
	case err != nil:
		return casResult{}, err
	case pair != nil && pair.LastIndex != 0 && bytes.Equal(pair.Value, value):
		return casResult{landed: true, pair: pair}, nil
	}
	s, err := readBack()
	if err != nil {
		return casResult{}, err
	}
	if s.kind == snapRecord && s.rec.Token == next.Token {
		return casResult{landed: true, pair: s.pair}, nil
	}
	return casResult{landed: true, later: s}, nil
}

// readKey reads the key with a linearizable read where the backend has one;
// a missing key is a snapshot, not an error.
func readKey(ctx context.Context, client Backend, key string) (snapshot, error) {
	pair, err := getKey(ctx, client, key)
	switch {
	case errors.Is(err, store.ErrKeyNotFound):
		return snapshot{kind: snapMissing}, nil
	case err != nil:
		return snapshot{}, err
	}
	return snapshotOf(pair), nil
}

// isConflict reports whether a compare-and-swap failed because the key
// changed, appeared or vanished since it was read.
func isConflict(err error) bool {
	return errors.Is(err, store.ErrKeyModified) || errors.Is(err, store.ErrKeyExists) || errors.Is(err, store.ErrKeyNotFound)
}
