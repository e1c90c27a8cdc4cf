package memory

import (
	"bytes"
	"context"
	"sort"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/kv"
)

// Open returns a new handle on the backend cfg.Name, creating the backend if
// it does not exist yet: the shape of every adapter's Open. Opening
// succeeds even while the backend is stopped (see stopServer); calls then
// fail until it is started again. It fails with an error matching store.ErrInvalidConfig for an empty
// name, and with ctx's error if ctx is already done.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		return nil, errNoName
	}

	b := backendFor(name)

	s := &Store{
		b:        b,
		closedCh: make(chan struct{}),
		owned:    make(map[*entry]struct{}),
	}
	s.life, s.endLife = context.WithCancel(context.Background())

	b.mu.Lock()
	b.handles[s] = struct{}{}
	b.mu.Unlock()

	return s, nil
}

// Store is one client handle on a named in-process backend. It implements
// valkeyrie's store.Store (and so leadership.Backend) and fenced.Putter,
// and is safe for concurrent use.
type Store struct {
	b        *backend
	closedCh chan struct{}   // closed by Close
	life     context.Context // ends at Close: the watches' feeds stop with it
	endLife  context.CancelFunc
	wg       sync.WaitGroup

	// Guarded by b.mu.
	closed       bool
	disconnected bool
	owned        map[*entry]struct{} // keys this handle keeps alive
}

var _ store.Store = (*Store)(nil)

// Name returns the name of the backend the handle is attached to.
func (s *Store) Name() string {
	return s.b.name
}

// MinTTL returns the smallest TTL the store honours. Smaller positive TTLs
// are rounded up to it.
func (s *Store) MinTTL() time.Duration {
	return minTTL
}

// reachable reports whether the handle can talk to its backend.
// Must be called with b.mu held.
func (s *Store) reachable() bool {
	return !s.closed && !s.disconnected && !s.b.down
}

// reachErr returns why the handle cannot talk to its backend, or nil.
// Must be called with b.mu held.
func (s *Store) reachErr() error {
	switch {
	case s.closed:
		return errClosed
	case s.disconnected:
		return errDisconnected
	case s.b.down:
		return errServerDown
	default:
		return nil
	}
}

// enter checks ctx and reachability and, on success, returns with b.mu held.
func (s *Store) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}

	s.b.mu.Lock()

	if err := s.reachErr(); err != nil {
		s.b.mu.Unlock()

		return err
	}

	return nil
}

// enterKey is enter followed by key normalisation; an empty key fails with
// an error matching store.ErrInvalidKey.
func (s *Store) enterKey(ctx context.Context, key string) (string, error) {
	if err := s.enter(ctx); err != nil {
		return "", err
	}

	k := kv.NormalizeKey(key)
	if k == "" {
		s.b.mu.Unlock()

		return "", errEmptyKey
	}

	return k, nil
}

// Put writes value at key. With opts.TTL > 0 the key expires TTL after the
// write, or, with opts.KeepAlive, TTL after this handle stops keeping it
// alive (Close, a disconnect, a stopped server). A write without TTL makes the key
// persistent.
func (s *Store) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return err
	}
	defer s.b.mu.Unlock()

	ttl, keepAlive := writeOpts(opts)
	s.b.set(s, k, value, ttl, keepAlive, nil)

	return nil
}

func writeOpts(opts *store.WriteOptions) (time.Duration, bool) {
	if opts == nil {
		return 0, false
	}

	return kv.EffectiveTTL(opts.TTL, minTTL), opts.KeepAlive
}

// Get returns a copy of the pair at key, or store.ErrKeyNotFound.
func (s *Store) Get(ctx context.Context, key string, _ *store.ReadOptions) (*store.KVPair, error) {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return nil, err
	}
	defer s.b.mu.Unlock()

	e := s.b.lookup(k)
	if e == nil {
		return nil, store.ErrKeyNotFound
	}

	return e.pair(), nil
}

// Delete removes key, or returns store.ErrKeyNotFound.
func (s *Store) Delete(ctx context.Context, key string) error {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return err
	}
	defer s.b.mu.Unlock()

	e := s.b.lookup(k)
	if e == nil {
		return store.ErrKeyNotFound
	}

	s.b.publish(s.b.remove(e))

	return nil
}

// Exists reports whether key exists.
func (s *Store) Exists(ctx context.Context, key string, _ *store.ReadOptions) (bool, error) {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return false, err
	}
	defer s.b.mu.Unlock()

	return s.b.lookup(k) != nil, nil
}

// List returns copies of every key below directory, at any depth, sorted by
// key and excluding directory itself. It returns store.ErrKeyNotFound when
// neither directory nor anything below it exists.
func (s *Store) List(ctx context.Context, directory string, _ *store.ReadOptions) ([]*store.KVPair, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.b.mu.Unlock()

	dir := kv.NormalizeKey(directory)
	pairs := s.b.list(dir)

	if len(pairs) == 0 && (dir == "" || s.b.lookup(dir) == nil) {
		return nil, store.ErrKeyNotFound
	}

	return pairs, nil
}

// DeleteTree removes directory and every key below it. Deleting nothing is
// not an error.
func (s *Store) DeleteTree(ctx context.Context, directory string) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.b.mu.Unlock()

	dir := kv.NormalizeKey(directory)

	var victims []*entry
	for k, e := range s.b.entries {
		if (dir != "" && k == dir) || kv.Under(k, dir) {
			victims = append(victims, e)
		}
	}

	sort.Slice(victims, func(i, j int) bool { return victims[i].key < victims[j].key })

	changes := make([]change, 0, len(victims))
	for _, e := range victims {
		changes = append(changes, s.b.remove(e))
	}

	s.b.publish(changes...)

	return nil
}

// AtomicPut writes key if previous matches its current state: previous ==
// nil requires the key to be absent (else store.ErrKeyExists), otherwise
// the key must exist (else store.ErrKeyNotFound) with LastIndex equal to
// previous.LastIndex and, when previous.Value is not nil, its value equal
// to previous.Value (else store.ErrKeyModified), so that a key written
// anew at an index handed out again after LoseData is not taken for the
// one previous was read from. opts apply as for Put.
func (s *Store) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return false, nil, err
	}
	defer s.b.mu.Unlock()

	e := s.b.lookup(k)

	switch {
	case previous == nil && e != nil:
		return false, nil, store.ErrKeyExists
	case previous != nil && e == nil:
		return false, nil, store.ErrKeyNotFound
	case previous != nil && (previous.LastIndex != e.index || previous.Value != nil && !bytes.Equal(previous.Value, e.value)):
		return false, nil, store.ErrKeyModified
	}

	ttl, keepAlive := writeOpts(opts)
	ne := s.b.set(s, k, value, ttl, keepAlive, nil)

	return true, ne.pair(), nil
}

// AtomicDelete deletes key if its LastIndex equals previous.LastIndex and,
// when previous.Value is not nil, its value equals previous.Value (so that
// a key written anew at an index handed out again after loseData is not
// taken for the one previous was read from). It returns
// store.ErrPreviousNotSpecified for a nil previous, store.ErrKeyNotFound
// for a missing key and store.ErrKeyModified on a mismatch.
func (s *Store) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	k, err := s.enterKey(ctx, key)
	if err != nil {
		return false, err
	}
	defer s.b.mu.Unlock()

	if previous == nil {
		return false, store.ErrPreviousNotSpecified
	}

	e := s.b.lookup(k)

	switch {
	case e == nil:
		return false, store.ErrKeyNotFound
	case previous.LastIndex != e.index, previous.Value != nil && !bytes.Equal(previous.Value, e.value):
		return false, store.ErrKeyModified
	}

	s.b.publish(s.b.remove(e))

	return true, nil
}

// Close detaches the handle as if the client vanished: its watch channels
// close, its blocked calls return an error matching store.ErrClosed, and the keys and locks it kept
// alive expire one TTL later. Every later call returns an error matching store.ErrClosed. Close is
// idempotent and waits for the handle's goroutines to end.
func (s *Store) Close() error {
	b := s.b

	b.mu.Lock()
	if s.closed {
		b.mu.Unlock()

		return nil
	}

	was := s.reachable()
	s.closed = true
	close(s.closedCh)
	s.endLife()
	b.reachChanged(s, was)
	delete(b.handles, s)
	b.broadcastState()
	b.mu.Unlock()

	s.wg.Wait()

	return nil
}
