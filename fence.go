package leadership

import (
	"context"
	"errors"
	"fmt"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
)

// fencedRetries is how many times FencedPut tries again when the record
// changed but still holds the term (a renewal of the leader's own came
// between).
const fencedRetries = 3

// FencedPut writes value at key, in the candidate's store, only if the
// election record still holds term: the store checks it in the same atomic
// operation as the write. Unlike IsLeader, it does not ask the candidate's
// clock: a leader that was paused or cut off after it took term, and whose
// record another candidate has since taken, is refused by the store, with
// an error matching ErrFenced, however late its write arrives. A
// write that lands was made while the record held term.
//
// The store compares the record it holds with the one this candidate last
// wrote in term, value and index (see fenced.Putter), so that a record
// written by another at an index the store handed out again, after it lost
// its data, does not pass for it. The write is also refused, before any
// store call and with the same error, once term's Context is done
// (the term ended, though its release may not have reached the store yet)
// and once this candidate has seen the store go back in time since its
// last write of term (indexes seen before may then be handed out again).
//
// term is a term this candidate led (from CurrentTerm or Run).
// A store that cannot check atomically (it does not implement
// fenced.Putter) is refused with ErrFencingUnsupported, a term this
// candidate never led with ErrNotLeader, and the election's own key with
// ErrInvalidOption (an *OptionError naming "key"). Other failures are the
// store's: they match ErrStore.
func (c *Candidate) FencedPut(ctx context.Context, term Term, key string, value []byte) error {
	if c.err != nil {
		return c.err
	}
	w, ok := c.client.(fenced.Putter)
	if !ok {
		return fmt.Errorf("%w: %T", ErrFencingUnsupported, c.client)
	}
	switch normalizeKey(key) {
	case "":
		return ErrEmptyKey
	case c.key:
		return &OptionError{Option: "key", Reason: fmt.Sprintf("%q is the election's own key: a write would overwrite the record that guards it", key)}
	}
	guard, id, ok := c.values.lastWrite(term.Token)
	if !ok {
		return ErrNotLeader
	}
	for range fencedRetries {
		if term.Context().Err() != nil || c.values.wentBackSinceWrite() {
			return fencedRefused(term.Token, key)
		}
		err := fencedPutKey(ctx, w, key, value, c.key, guard)
		if !errors.Is(err, fenced.ErrGuardChanged) {
			if err != nil {
				return &storeFailure{Op: "fenced put", Key: key, Err: err}
			}
			return nil
		}
		// The record changed: a renewal of this term, or another holder.
		s, rerr := readKey(ctx, c.client, c.key)
		if rerr != nil {
			return &storeFailure{Op: "get", Key: c.key, Err: rerr}
		}
		if s.kind != snapRecord || s.rec.Term != term.Token || s.rec.ID != id || s.rec.Ended {
			return fencedRefused(term.Token, key)
		}
		guard = s.pair
	}
	return fencedRefused(term.Token, key)
}

// fencedRefused is the error of a fenced write refused because the
// election record no longer holds the term: it matches ErrFenced.
func fencedRefused(token uint64, key string) error {
	return fmt.Errorf("%w: write to %q: the election record no longer holds term %d", ErrFenced, key, token)
}

// lastWriteOf is the guard of a fenced write: the record as the store
// confirmed this candidate's last write of a term.
type lastWriteOf struct {
	pair     *store.KVPair
	id       string
	wentBack bool // the store was seen going back in time since
}

// storeWentBack notes that the engine saw the store go back in time (lost
// or restored its data): the index of the last write may be handed out
// again, to another's record, so no fenced write goes through it any more.
// The next confirmed write clears it.
func (p *proclamation) storeWentBack() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last.wentBack = true
}

// wentBackSinceWrite reports whether the store was seen going back in time
// since the last confirmed write.
func (p *proclamation) wentBackSinceWrite() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last.wentBack
}
