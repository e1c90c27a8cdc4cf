package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/guard"
)

// Store is an open ZooKeeper store: it implements valkeyrie's
// store.Store (and so leadership.Backend) and fenced.Putter, on one
// ZooKeeper session at a time (see the package documentation). Close
// closes the session and waits for the client's goroutines.
type Store struct{ *guarded }

// guarded is the guard layer a *Store embeds: its calls return by their
// context's deadline, or after RequestTimeout.
type guarded = guard.Fenced

// Open connects to the ensemble, authenticates when cfg.Username is set,
// and checks the session with a round trip, all within cfg.DialTimeout (or
// ctx's deadline if sooner). When that fails it returns an
// error matching store.ErrUnreachable (errors.Is(err, store.ErrNotReachable)) naming the
// endpoints, after closing the client: nothing is left running. The store
// returned bounds every call by its context, or by cfg.RequestTimeout when
// the context has no deadline.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	st, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	s, err := connect(st)
	if err != nil {
		return nil, err
	}
	conn, d := s.zc(), s.cur.Load().dialer
	octx, cancel := context.WithTimeout(ctx, st.dialTimeout)
	defer cancel()
	done := make(chan error, 1)
	var probe sync.WaitGroup
	probe.Go(func() {
		if st.username != "" {
			if err := conn.AddAuth("digest", []byte(st.username+":"+st.password)); err != nil {
				done <- fmt.Errorf("digest authentication: %w", err)
				return
			}
		}
		_, _, err := conn.Exists("/")
		done <- err
	})
	select {
	case err = <-done:
	case <-octx.Done():
		err = octx.Err()
	case <-d.tlsAll: // every endpoint failed TLS: no need to wait
		err = d.lastTLSError()
	}
	if err != nil {
		_ = s.Close()
		probe.Wait() // the closed client fails the probe's requests
		if errors.Is(err, zk.ErrAuthFailed) || errors.Is(err, zk.ErrNoAuth) {
			return nil, fmt.Errorf("zookeeper: open %s: %w (%w)", strings.Join(st.endpoints, ","), errAuthFailed, err)
		}
		if terr := d.lastTLSError(); terr != nil {
			return nil, unreachable("open", st.endpoints, terr)
		}
		if st.tls == nil && !errors.Is(ctx.Err(), context.Canceled) {
			for _, ep := range st.endpoints {
				if speaksTLS(context.WithoutCancel(ctx), ep, 2*time.Second) {
					return nil, unreachable("open", st.endpoints, fmt.Errorf("%s: %w", ep, adapter.ErrServerSpeaksTLS))
				}
			}
		}
		return nil, adapter.Explain(ctx, backend, st.endpoints, st.tls, unreachable("open", st.endpoints, err))
	}
	s.tasks.Go(s.monitor)
	return &Store{guard.NewFenced(s, s, st.requestTimeout)}, nil
}

// kv implements store.Store on a zk client (one ZooKeeper session at a
// time: see monitor). The zk client ignores contexts; the guard Open puts
// around kv bounds every call.
type kv struct {
	st        settings
	cur       atomic.Pointer[client] // the current client
	swapMu    sync.Mutex             // serialises replacing it and Close
	replaced  atomic.Int64           // clients replaced
	endpoints []string
	acl       []zk.ACL

	ctx       context.Context // ends at Close: stops watches and lock monitors
	cancel    context.CancelFunc
	closed    atomic.Bool
	closeOnce sync.Once
	tasks     sync.WaitGroup
}

// connect starts a zk client; it connects in the background.
func connect(st settings) (*kv, error) {
	c, err := newClient(st)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &kv{st: st, endpoints: st.endpoints, ctx: ctx, cancel: cancel, acl: zk.WorldACL(zk.PermAll)}
	s.cur.Store(c)
	switch {
	case st.acl != nil:
		s.acl = st.acl
	case st.username != "":
		s.acl = zk.AuthACL(zk.PermAll)
	}
	if st.username != "" {
		// The auth scheme would give the rights to every identity of the
		// session, its client certificate's (x509) too, which other
		// users may share: name the digest identity instead.
		s.acl = append([]zk.ACL(nil), s.acl...)
		for i, a := range s.acl {
			if a.Scheme == "auth" {
				s.acl[i] = zk.ACL{Perms: a.Perms, Scheme: "digest", ID: digest(st.username, st.password)}
			}
		}
	}
	return s, nil
}

// Close ends the session (its ephemeral nodes and locks go at once), stops
// watches and lock monitors, and waits (up to 5s) for every goroutine of the
// zk client to end.
func (s *kv) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.cancel()
		s.swapMu.Lock() // no client replaced from now on
		c := s.cur.Load()
		s.swapMu.Unlock()
		start := time.Now()
		c.close()
		if rest := closeGrace - time.Since(start); rest > 0 {
			guard.AwaitGroup(&s.tasks, rest)
		}
	})
	return nil
}

// path turns a key into a znode path: one leading "/", no trailing "/",
// the same mapping as kvtools/zookeeper's, so both see the same nodes.
func path(key string) (string, error) {
	k := strings.Trim(key, "/")
	if k == "" {
		return "", errEmptyKey
	}
	return "/" + k, nil
}

// keyOf is the key of a znode path, without the leading "/".
func keyOf(p string) string { return strings.TrimPrefix(p, "/") }

// fail maps a zk error to the store's errors.
func (s *kv) fail(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case s.closed.Load() && (isConnErr(err) || errors.Is(err, context.Canceled)):
		return errClosed
	case errors.Is(err, zk.ErrNoNode):
		return store.ErrKeyNotFound
	case errors.Is(err, zk.ErrNoAuth):
		return s.denied(op, err)
	case isConnErr(err):
		return unreachable(op, s.endpoints, err)
	default:
		return fmt.Errorf("zookeeper: %s: %w", op, err)
	}
}

func consistent(opts *store.ReadOptions) bool { return opts == nil || opts.Consistent }

// sync makes the server this session reads from catch up with the leader.
func (s *kv) sync(p string) error {
	_, err := s.zc().Sync(p)
	return err
}

// readPath returns the node of key for a read, op: unless opts asks for
// an inconsistent read (opts.Consistent false), the session's server is
// synced with the leader first, so the read is not stale.
func (s *kv) readPath(op, key string, opts *store.ReadOptions) (string, error) {
	p, err := path(key)
	if err != nil {
		return "", err
	}
	if consistent(opts) {
		if err := s.sync(p); err != nil {
			return "", s.fail(op, err)
		}
	}
	return p, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Get returns the value at key and its data version as LastIndex. Unless
// opts asks for an inconsistent read (opts.Consistent false), the session's
// server is synced with the leader first, so the read is not stale.
func (s *kv) Get(_ context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	p, err := s.readPath("get", key, opts)
	if err != nil {
		return nil, err
	}
	data, stat, err := s.zc().Get(p)
	if err != nil {
		return nil, s.fail("get", deniedAt(err, p, zk.PermRead))
	}
	return &store.KVPair{Key: key, Value: nonNil(data), LastIndex: uint64(stat.Version)}, nil
}

// Exists reports whether key exists, synced like Get.
func (s *kv) Exists(_ context.Context, key string, opts *store.ReadOptions) (bool, error) {
	p, err := s.readPath("exists", key, opts)
	if err != nil {
		return false, err
	}
	ok, _, err := s.zc().Exists(p)
	return ok, s.fail("exists", err)
}

// create creates p with data, and its missing parents (empty) first.
func (s *kv) create(p string, data []byte, flags int32) error {
	for attempt := 0; ; attempt++ {
		_, err := s.zc().Create(p, data, flags, s.acl)
		if !errors.Is(err, zk.ErrNoNode) || attempt == 3 {
			return deniedAt(err, parent(p), zk.PermCreate)
		}
		// A parent is missing: create each prefix, tolerating those that
		// exist, then retry (a parent may vanish again meanwhile).
		for i := 1; i < len(p); i++ {
			if p[i] != '/' {
				continue
			}
			_, err := s.zc().Create(p[:i], []byte{}, 0, s.acl)
			if errors.Is(err, zk.ErrNoAuth) {
				// ZooKeeper checks the right to create before whether the
				// node exists: an existing parent in a read-only
				// ancestor (made by an administrator) is refused so.
				if ok, _, xerr := s.zc().Exists(p[:i]); xerr == nil && ok {
					continue
				}
			}
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return deniedAt(err, parent(p[:i]), zk.PermCreate)
			}
		}
	}
}

// lockNode matches the name of a node of zk's lock recipe
// (CreateProtectedEphemeralSequential of "lock-").
var lockNode = regexp.MustCompile(`^_c_[0-9a-f]{32}-lock-[0-9]{10}$`)

func isLockNode(p string) bool { return lockNode.MatchString(p[strings.LastIndexByte(p, '/')+1:]) }

func flagsOf(opts *store.WriteOptions) int32 {
	if opts != nil && opts.TTL > 0 {
		return zk.FlagEphemeral
	}
	return 0
}

// Put writes value at key, creating missing parents. With opts.TTL > 0 a
// node created by Put is ephemeral: it lives as long as this store's
// session (the TTL's length is not used), as with kvtools.
func (s *kv) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	p, err := path(key)
	if err != nil {
		return err
	}
	for {
		_, err := s.zc().Set(p, value, -1)
		if !errors.Is(err, zk.ErrNoNode) {
			return s.fail("put", deniedAt(err, p, zk.PermWrite))
		}
		err = s.create(p, value, flagsOf(opts))
		if !errors.Is(err, zk.ErrNodeExists) {
			return s.fail("put", err)
		}
		// Created by someone else meanwhile: overwrite it.
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// Delete removes key. A key with children cannot be deleted (zk.ErrNotEmpty).
func (s *kv) Delete(_ context.Context, key string) error {
	p, err := path(key)
	if err != nil {
		return err
	}
	return s.fail("delete", deniedAt(s.zc().Delete(p, -1), parent(p), zk.PermDelete))
}

// version converts a LastIndex to a znode data version. ok is false when
// the index cannot be one (int32(index) would misread it, -1 even meaning
// "any version").
func version(index uint64) (int32, bool) {
	if index > math.MaxInt32 {
		return 0, false
	}
	return int32(index), true
}

// AtomicPut creates key (previous nil; missing parents are created) or
// replaces it if its data version is still previous.LastIndex. It returns
// the pair written: the value given and the new data version.
func (s *kv) AtomicPut(_ context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	p, err := path(key)
	if err != nil {
		return false, nil, err
	}
	if previous == nil {
		err := s.create(p, value, flagsOf(opts))
		if errors.Is(err, zk.ErrNodeExists) {
			return false, nil, store.ErrKeyExists
		}
		if err != nil {
			return false, nil, s.fail("atomic put", err)
		}
		return true, &store.KVPair{Key: key, Value: value, LastIndex: 0}, nil // a new node's version is 0
	}
	v, ok := version(previous.LastIndex)
	if !ok {
		return false, nil, store.ErrKeyModified
	}
	stat, err := s.zc().Set(p, value, v)
	switch {
	case errors.Is(err, zk.ErrBadVersion):
		return false, nil, store.ErrKeyModified
	case err != nil:
		return false, nil, s.fail("atomic put", deniedAt(err, p, zk.PermWrite))
	}
	return true, &store.KVPair{Key: key, Value: value, LastIndex: uint64(stat.Version)}, nil
}

// AtomicDelete deletes key if its data version is still previous.LastIndex.
// When previous.Value is not nil, a read first checks that the node still
// holds that value at that version (a version starts again at 0 when a
// node is created anew, so the version alone does not identify it); as in
// FencedPut, a node written anew up to the same version between the read
// and the delete is not seen.
func (s *kv) AtomicDelete(_ context.Context, key string, previous *store.KVPair) (bool, error) {
	if previous == nil {
		return false, store.ErrPreviousNotSpecified
	}
	p, err := path(key)
	if err != nil {
		return false, err
	}
	v, ok := version(previous.LastIndex)
	if !ok {
		return false, store.ErrKeyModified
	}
	if previous.Value != nil {
		found, same, err := s.holds(p, v, previous.Value)
		if err != nil {
			return false, s.fail("atomic delete", deniedAt(err, p, zk.PermRead))
		}
		if found && !same { // a missing node: the delete says so
			return false, store.ErrKeyModified
		}
	}
	err = s.zc().Delete(p, v)
	switch {
	case errors.Is(err, zk.ErrBadVersion):
		return false, store.ErrKeyModified
	case err != nil:
		return false, s.fail("atomic delete", deniedAt(err, parent(p), zk.PermDelete))
	}
	return true, nil
}

// descendants returns the paths below p, parents before children.
// ok is false when p does not exist.
func (s *kv) descendants(p string) (paths []string, ok bool, err error) {
	queue := []string{p}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		children, _, err := s.zc().Children(dir)
		err = deniedAt(err, dir, zk.PermRead)
		if errors.Is(err, zk.ErrNoNode) {
			if dir == p {
				return nil, false, nil
			}
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, false, err
		}
		sort.Strings(children)
		for _, c := range children {
			queue = append(queue, dir+"/"+c)
			paths = append(paths, dir+"/"+c)
		}
	}
	return paths, true, nil
}

// List returns every key below directory, at any depth, sorted, without
// directory itself; store.ErrKeyNotFound when directory does not exist.
// Keys are returned without a leading "/". The nodes NewLock's locks
// create below their key are left out.
func (s *kv) List(_ context.Context, directory string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	p, err := s.readPath("list", directory, opts)
	if err != nil {
		return nil, err
	}
	paths, ok, err := s.descendants(p)
	if err != nil {
		return nil, s.fail("list", err)
	}
	if !ok {
		return nil, store.ErrKeyNotFound
	}
	sort.Strings(paths)
	pairs := make([]*store.KVPair, 0, len(paths))
	for _, c := range paths {
		if isLockNode(c) {
			continue
		}
		data, stat, err := s.zc().Get(c)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, s.fail("list", deniedAt(err, c, zk.PermRead))
		}
		pairs = append(pairs, &store.KVPair{Key: keyOf(c), Value: nonNil(data), LastIndex: uint64(stat.Version)})
	}
	return pairs, nil
}

// DeleteTree deletes directory and every key below it, in one
// transaction (retried if the tree changes meanwhile). Deleting nothing is
// not an error.
func (s *kv) DeleteTree(ctx context.Context, directory string) error {
	p, err := path(directory)
	if err != nil {
		return err
	}
	for {
		paths, ok, err := s.descendants(p)
		if err != nil {
			return s.fail("delete tree", err)
		}
		if !ok {
			return nil
		}
		ops := make([]any, 0, len(paths)+1)
		for i := len(paths) - 1; i >= 0; i-- { // children before parents
			ops = append(ops, &zk.DeleteRequest{Path: paths[i], Version: -1})
		}
		ops = append(ops, &zk.DeleteRequest{Path: p, Version: -1})
		_, err = s.zc().Multi(ops...)
		if err == nil {
			return nil
		}
		if !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrNotEmpty) {
			return s.fail("delete tree", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
