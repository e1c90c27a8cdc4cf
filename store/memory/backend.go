package memory

import (
	"sort"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/kv"
)

// backend is the shared state behind every handle opened with one name.
// All fields, and the mutable fields of the handles, entries, locks and
// watches attached to it, are guarded by mu.
type backend struct {
	name string

	mu      sync.Mutex
	index   uint64            // last index handed out
	entries map[string]*entry // live keys
	down    bool              // StopServer was called

	handles     map[*Store]struct{}
	keyWatches  map[string]map[*keyWatch]struct{}
	treeWatches map[*treeWatch]struct{}

	// waiters holds, per key, a channel closed when the lock on that key is
	// released. It is created lazily by the first waiter.
	waiters kv.Waiters
	// stateCh is closed and replaced whenever a handle's reachability may
	// have changed, so that blocked Lock calls re-check.
	stateCh chan struct{}
}

// entry is one stored key.
type entry struct {
	key   string
	value []byte // never nil
	index uint64 // index of the last modification
	ttl   time.Duration

	owner *Store     // handle keeping the key alive, nil if none
	lock  *lockState // lock held through this key, nil if none

	timer    *time.Timer // expiry countdown, nil when not counting
	deadline time.Time   // expiry time while timer != nil
	timerGen uint64      // bumped on every stop, invalidates stale callbacks
}

// change describes one modification; pair.Value is nil for a deletion.
type change struct {
	pair *store.KVPair
}

func newBackend(name string) *backend {
	return &backend{
		name:        name,
		entries:     make(map[string]*entry),
		handles:     make(map[*Store]struct{}),
		keyWatches:  make(map[string]map[*keyWatch]struct{}),
		treeWatches: make(map[*treeWatch]struct{}),
		waiters:     kv.Waiters{},
		stateCh:     make(chan struct{}),
	}
}

func (e *entry) pair() *store.KVPair {
	return &store.KVPair{Key: e.key, Value: kv.CloneBytes(e.value), LastIndex: e.index}
}

func (b *backend) nextIndex() uint64 {
	b.index++

	return b.index
}

// lookup returns the live entry for key, expiring it first if its deadline
// has passed but its timer has not fired yet.
func (b *backend) lookup(key string) *entry {
	e := b.entries[key]
	if e != nil && e.expiredAt(time.Now()) {
		b.expireNow(e)

		return nil
	}

	return e
}

// set writes key, replacing any previous entry (which releases a lock held
// through it), publishes the change and returns the new entry. The entry is
// kept alive by h when it has a TTL and keepAlive is set or lock is not nil.
func (b *backend) set(h *Store, key string, value []byte, ttl time.Duration, keepAlive bool, lock *lockState) *entry {
	if old := b.entries[key]; old != nil {
		b.detach(old)
	}

	e := &entry{key: key, value: kv.CloneBytes(value), index: b.nextIndex(), ttl: ttl, lock: lock}
	if ttl > 0 && h != nil && (keepAlive || lock != nil) {
		e.owner = h
		h.owned[e] = struct{}{}
	}

	b.entries[key] = e
	b.syncTimer(e)
	b.publish(change{pair: e.pair()})

	return e
}

// remove deletes e and returns the change to publish.
func (b *backend) remove(e *entry) change {
	b.detach(e)
	delete(b.entries, e.key)

	return change{pair: &store.KVPair{Key: e.key, LastIndex: b.nextIndex()}}
}

// detach stops e's timer, its keep-alive and the lock held through it.
func (b *backend) detach(e *entry) {
	b.stopTimer(e)

	if e.owner != nil {
		delete(e.owner.owned, e)
		e.owner = nil
	}

	if e.lock != nil {
		b.releaseLock(e.key, e.lock)
		e.lock = nil
	}
}

// list returns copies of the live entries under dir, sorted by key.
func (b *backend) list(dir string) []*store.KVPair {
	now := time.Now()
	out := []*store.KVPair{}

	for k, e := range b.entries {
		if kv.Under(k, dir) && !e.expiredAt(now) {
			out = append(out, e.pair())
		}
	}

	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })

	return out
}

// broadcastState wakes every blocked Lock call so it re-checks reachability.
func (b *backend) broadcastState() {
	close(b.stateCh)
	b.stateCh = make(chan struct{})
}
