package adapter

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/kvtools/valkeyrie/store"
)

// failing answers every call with err.
type failing struct {
	store.Store
	err error
}

func (f failing) Get(context.Context, string, *store.ReadOptions) (*store.KVPair, error) {
	return nil, f.err
}

func TestClassify(t *testing.T) {
	isEOF := func(err error) bool { return errors.Is(err, io.EOF) }
	for _, tc := range []struct {
		err         error
		unreachable bool
	}{
		{io.EOF, true},
		{store.ErrKeyNotFound, false},
		{store.ErrNotReachable, true},
	} {
		c := &Classified{Store: failing{err: tc.err}, Unreachable: isEOF}
		_, err := c.Get(context.Background(), "k", nil)
		if !errors.Is(err, tc.err) || errors.Is(err, store.ErrNotReachable) != tc.unreachable {
			t.Errorf("%v classified as %v", tc.err, err)
		}
	}
	if err := (&Classified{Unreachable: isEOF}).Classify(nil); err != nil {
		t.Fatalf("Classify(nil) = %v", err)
	}
}
