package guard

import (
	"context"
	"errors"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/fenced"
)

// Fenced is a guarded store that can also write fenced (fenced.Putter):
// its FencedPut, like every other call, returns by its context's deadline.
type Fenced struct {
	*Store
	putter fenced.Putter
}

// ErrNotFenced is FencedPut's error on a *Fenced made by NewFenced without
// a fenced.Putter: the store cannot make fenced writes.
var ErrNotFenced = errors.New("the store cannot make fenced writes")

// NewFenced guards s as Wrap does, with p making its fenced writes (nil:
// FencedPut fails with ErrNotFenced): the layer every adapter's *Store
// embeds.
func NewFenced(s store.Store, p fenced.Putter, timeout time.Duration) *Fenced {
	return &Fenced{Store: Wrap(s, timeout), putter: p}
}

// WrapFenced guards s as Wrap does. When p is not nil, p makes the fenced
// writes of s (usually p is s itself, or the layer of s that can reach the
// server's transactions) and the result is a *Fenced; otherwise it is a
// *Store, which does not implement fenced.Putter.
func WrapFenced(s store.Store, p fenced.Putter, timeout time.Duration) store.Store {
	g := Wrap(s, timeout)
	if p == nil {
		return g
	}
	return &Fenced{Store: g, putter: p}
}

// FencedPut is fenced.Putter's FencedPut. An abandoned call's write may
// land, but only if the guard held: the check and the write are one
// operation of the store.
func (f *Fenced) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	if f.putter == nil {
		return ErrNotFenced
	}
	_, err := call(f.Store, ctx, func(ctx context.Context) (none, error) {
		return none{}, f.putter.FencedPut(ctx, key, value, guardKey, guard)
	})
	return err
}

// Unwrap returns the store that s guards, when s is a *Store, a *Fenced,
// or a type that embeds one (an adapter's *Store), or nil.
func Unwrap(s store.Store) store.Store {
	if g, ok := s.(interface{ Unwrap() store.Store }); ok {
		return g.Unwrap()
	}
	return nil
}
