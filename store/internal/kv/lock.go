package kv

import (
	"time"

	"github.com/kvtools/valkeyrie/store"

	lstore "github.com/leadership-go/leadership/store"
)

var (
	// ErrNotLocked is the shared store.ErrNotLocked.
	ErrNotLocked = lstore.ErrNotLocked

	// ErrAlreadyLocked is the shared store.ErrAlreadyLocked.
	ErrAlreadyLocked = lstore.ErrAlreadyLocked
)

// EffectiveTTL maps a requested TTL to the one honoured: none for d <= 0,
// at least minTTL otherwise.
func EffectiveTTL(d, minTTL time.Duration) time.Duration {
	switch {
	case d <= 0:
		return 0
	case d < minTTL:
		return minTTL
	default:
		return d
	}
}

// LockSpec is what a Locker keeps of its store.LockOptions.
type LockSpec struct {
	Value          []byte // a copy of the options' value, never nil
	TTL            time.Duration
	Renew          chan struct{} // the caller's RenewLock, or nil
	DeleteOnUnlock bool
}

// NewLockSpec reads opts (nil for none): TTL defaults to defaultTTL and is
// at least minTTL.
func NewLockSpec(opts *store.LockOptions, defaultTTL, minTTL time.Duration) LockSpec {
	spec := LockSpec{Value: []byte{}, TTL: defaultTTL}
	if opts != nil {
		spec.Value = CloneBytes(opts.Value)
		spec.Renew = opts.RenewLock
		spec.DeleteOnUnlock = opts.DeleteOnUnlock

		if opts.TTL > 0 {
			spec.TTL = EffectiveTTL(opts.TTL, minTTL)
		}
	}

	return spec
}

// Waiters holds, per key, a channel closed at the next release of (or
// event on) the key, for the Lock calls blocked on it. Its owner guards
// it with its own mutex.
type Waiters map[string]chan struct{}

// Chan returns the channel closed at the next Wake of key.
func (w Waiters) Chan(key string) chan struct{} {
	ch := w[key]
	if ch == nil {
		ch = make(chan struct{})
		w[key] = ch
	}

	return ch
}

// Wake closes the channel of key, if any.
func (w Waiters) Wake(key string) {
	if ch := w[key]; ch != nil {
		close(ch)
		delete(w, key)
	}
}

// WakeAll closes every channel.
func (w Waiters) WakeAll() {
	for key := range w {
		w.Wake(key)
	}
}
