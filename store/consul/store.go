package consul

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/adapter"
	"github.com/leadership-go/leadership/store/internal/guard"
	"github.com/leadership-go/leadership/store/internal/watch"
)

// Store is an open Consul store: it implements valkeyrie's store.Store
// (and so leadership.Backend) and fenced.Putter, on Consul's HTTP API
// (see the package documentation). Close ends the watches and waits a
// short while for the store's goroutines.
type Store struct{ *guarded }

// guarded is the guard layer a *Store embeds: its calls return by their
// context's deadline, or after RequestTimeout.
type guarded = guard.Fenced

// Open builds a Consul client with its own HTTP transport (timeouts, TLS,
// token; nothing process-wide is touched) and checks, within
// cfg.DialTimeout (or ctx's deadline if sooner), that the agent answers and
// its cluster has a leader. When that fails it returns an
// error matching store.ErrUnreachable (errors.Is(err, store.ErrNotReachable)) naming the
// endpoint, and nothing is left running. The store returned bounds every
// call by its context, or by cfg.RequestTimeout when the context has none.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	st, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	s, err := newKV(st)
	if err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, st.dialTimeout)
	defer cancel()
	if err := s.checkLeader(octx); err != nil {
		_ = s.Close()
		return nil, unreachable("open", s.endpoints, explainTLS(err, s.clientCert))
	}
	if err := s.checkToken(octx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return &Store{guard.NewFenced(s, s, st.requestTimeout)}, nil
}

// kv implements store.Store on Consul's HTTP API.
type kv struct {
	// client makes the ordinary requests, on at most maxConns
	// connections, reused; watchClient the blocking queries (the watch
	// hub's, WatchTree's, locks'), on connections of their own, so that
	// neither kind can starve the other.
	client, watchClient       *api.Client
	transport, watchTransport *http.Transport
	endpoints                 []string
	requestTimeout            time.Duration

	// anonymous: no ACL token is sent (none in Config.Token nor in
	// Consul's environment variables); clientCert: the TLS configuration
	// has a client certificate to offer. Both for error messages.
	anonymous, clientCert bool

	hub hub // every Watch of the store shares its blocking query

	// reads and staleReads run Gets (consistent and default mode),
	// writes AtomicPut's compare-and-swaps, batched under load.
	reads, staleReads, writes *batcher
	unbatchedGets             atomic.Bool // the agent is older than Consul 1.14

	ctx     context.Context // ends at Close: stops watches
	cancel  context.CancelFunc
	closed  atomic.Bool
	once    sync.Once
	taskMu  sync.RWMutex // closing, and tasks.Go against tasks.Wait
	closing bool
	tasks   sync.WaitGroup

	mu    sync.Mutex
	locks map[*lock]struct{} // held, released at Close
}

func newKV(st settings) (*kv, error) {
	dialer := &net.Dialer{Timeout: st.dialTimeout, KeepAlive: 15 * time.Second}
	newTransport := func(conns int) *http.Transport {
		return &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         dialer.DialContext,
			TLSClientConfig:     st.tls,
			TLSHandshakeTimeout: st.dialTimeout,
			// A safety net for requests without a context deadline (the
			// lock's): no answer may take longer than the longest
			// blocking query.
			ResponseHeaderTimeout: watchWait*17/16 + st.requestTimeout,
			// Every connection may idle: a burst of requests reuses them
			// rather than opening (and leaving in TIME_WAIT) new ones.
			MaxConnsPerHost:     conns,
			MaxIdleConns:        max(conns, 4),
			MaxIdleConnsPerHost: max(conns, 4),
			IdleConnTimeout:     90 * time.Second,
		}
	}
	// Ordinary requests wait for one of maxConns connections (within
	// their context); blocking queries are not capped (one for all the
	// watches, one per WatchTree and per lock).
	transport, watchTransport := newTransport(maxConns), newTransport(0)
	newClient := func(t *http.Transport) (*api.Client, error) {
		return api.NewClient(&api.Config{
			Address:    st.endpoint,
			Scheme:     st.scheme,
			Transport:  t,
			HttpClient: &http.Client{Transport: t},
			Token:      st.token,
			WaitTime:   watchWait,
		})
	}
	client, err := newClient(transport)
	var watchClient *api.Client
	if err == nil {
		watchClient, err = newClient(watchTransport)
	}
	if err != nil {
		transport.CloseIdleConnections()
		watchTransport.CloseIdleConnections()
		return nil, fmt.Errorf("%w: %w", errInvalidConfig, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &kv{
		client:         client,
		watchClient:    watchClient,
		transport:      transport,
		watchTransport: watchTransport,
		endpoints:      []string{st.endpoint},
		requestTimeout: st.requestTimeout,
		anonymous:      st.token == "" && os.Getenv(api.HTTPTokenEnvName) == "" && os.Getenv(api.HTTPTokenFileEnvName) == "",
		clientCert:     st.tls != nil && (len(st.tls.Certificates) > 0 || st.tls.GetClientCertificate != nil),
		ctx:            ctx,
		cancel:         cancel,
		locks:          map[*lock]struct{}{},
	}
	s.hub.init(s)
	s.reads = newBatcher(s, true)
	s.staleReads = newBatcher(s, false)
	s.writes = newBatcher(s, false)
	return s, nil
}

// startTask calls register and, if it returns true, runs f as one of the
// store's goroutines, which Close waits for. Once Close has begun it
// reports false and calls nothing.
func (s *kv) startTask(register func() bool, f func()) bool {
	s.taskMu.RLock()
	defer s.taskMu.RUnlock()
	if s.closing {
		return false
	}
	if register() {
		s.tasks.Go(f)
	}
	return true
}

// checkLeader asks the agent for its cluster's leader until it names one
// or ctx ends.
func (s *kv) checkLeader(ctx context.Context) error {
	for {
		var leader string
		_, err := s.client.Raw().Query("/v1/status/leader", &leader, (&api.QueryOptions{}).WithContext(ctx))
		switch {
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("%w (%w)", ctx.Err(), err)
		case err != nil:
			return err
		case leader != "":
			return nil
		}
		if !watch.Sleep(ctx, 100*time.Millisecond) {
			return fmt.Errorf("%w (%w)", errNoLeader, ctx.Err())
		}
	}
}

// Close stops watches, releases held locks, waits (up to 5s) for the
// store's goroutines, and closes idle connections.
func (s *kv) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		s.taskMu.Lock() // no goroutine starts from now on
		s.closing = true
		s.taskMu.Unlock()
		s.cancel()
		s.mu.Lock()
		held := make([]*lock, 0, len(s.locks))
		for l := range s.locks {
			held = append(held, l)
		}
		s.mu.Unlock()
		for _, l := range held {
			_ = l.Unlock(context.Background())
		}
		guard.AwaitGroup(&s.tasks, closeGrace)
		s.transport.CloseIdleConnections()
		s.watchTransport.CloseIdleConnections()
	})
	return nil
}

// normalize turns a key into a Consul key: without leading "/", as
// kvtools/consul does (a trailing "/" is kept: "a/" and "a" are distinct
// Consul keys).
func normalize(key string) (string, error) {
	k := strings.TrimLeft(key, "/")
	if k == "" {
		return "", errEmptyKey
	}
	return k, nil
}

// fail maps an API error to the store's errors.
func (s *kv) fail(op string, err error) error {
	var se api.StatusError
	var ue *url.Error
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case s.closed.Load():
		return errClosed
	}
	if e := aclError(op, err); e != nil {
		return e
	}
	err = explainTLS(err, s.clientCert)
	switch {
	case errors.As(err, &se) && se.Code < 500:
		return fmt.Errorf("consul: %s: %w", op, err)
	case errors.As(err, &se), errors.As(err, &ue), errors.As(err, &ne),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return unreachable(op, s.endpoints, err)
	default:
		return fmt.Errorf("consul: %s: %w", op, err)
	}
}

func query(ctx context.Context, consistent bool) *api.QueryOptions {
	return (&api.QueryOptions{RequireConsistent: consistent}).WithContext(ctx)
}

func isConsistent(opts *store.ReadOptions) bool { return opts == nil || opts.Consistent }

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func pairOf(p *api.KVPair) *store.KVPair {
	return &store.KVPair{Key: p.Key, Value: nonNil(p.Value), LastIndex: p.ModifyIndex}
}

// Get returns the pair at key with its ModifyIndex as LastIndex. The read
// is consistent (verified by the leader) unless opts.Consistent is false.
// It is an operation of a read transaction, batched with concurrent Gets
// under load.
func (s *kv) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	k, err := normalize(key)
	if err != nil {
		return nil, err
	}
	p, err := s.get(ctx, k, isConsistent(opts))
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, store.ErrKeyNotFound
	}
	return pairOf(p), nil
}

// kvGetOrEmpty reads a key in a transaction, missing or not (Consul 1.14
// and later; api v1.14 does not name it).
const kvGetOrEmpty api.KVOp = "get-or-empty"

// get reads key (nil when it does not exist) as an operation of a read
// transaction, batched with concurrent Gets under load. On agents older
// than Consul 1.14, which do not know the operation, it reads the key
// alone.
func (s *kv) get(ctx context.Context, key string, consistent bool) (*api.KVPair, error) {
	if !s.unbatchedGets.Load() {
		b := s.staleReads
		if consistent {
			b = s.reads
		}
		r := b.do(ctx, &api.KVTxnOp{Verb: kvGetOrEmpty, Key: key})
		switch {
		case r.err != nil:
			return nil, s.fail("get", r.err)
		case r.failed != nil && strings.Contains(txnErrors(r.failed), "unknown KV operation"):
			s.unbatchedGets.Store(true)
		case r.failed != nil:
			if e := deniedIn(r.failed); e != nil {
				return nil, s.fail("get", e)
			}
			return nil, fmt.Errorf("consul: get: %s", txnErrors(r.failed))
		case r.kv.ModifyIndex == 0: // get-or-empty's answer for a missing key
			return nil, nil
		default:
			return r.kv, nil
		}
	}
	p, _, err := s.client.KV().Get(key, query(ctx, consistent))
	return p, s.fail("get", err)
}

func txnErrors(errs []*api.TxnError) string {
	what := make([]string, len(errs))
	for i, e := range errs {
		what[i] = e.What
	}
	return strings.Join(what, "; ")
}

// Exists reports whether key exists, read like Get.
func (s *kv) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	_, err := s.Get(ctx, key, opts)
	if errors.Is(err, store.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// txn runs ops in one transaction. It returns the results, or the errors
// Consul reported for a rolled back transaction (ok false).
func (s *kv) txn(ctx context.Context, ops api.TxnOps) (ok bool, resp *api.TxnResponse, err error) {
	ok, resp, _, err = s.client.Txn().Txn(ops, (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return false, nil, err
	}
	if !ok && (resp == nil || len(resp.Errors) == 0) {
		return false, nil, errors.New("transaction refused without a reason")
	}
	return ok, resp, nil
}

// conflict classifies the errors of a rolled back transaction: stale
// (an index check or compare-and-swap failed), missing (a checked key does
// not exist), or another error.
func conflict(resp *api.TxnResponse) (stale, missing bool, err error) {
	if e := deniedIn(resp.Errors); e != nil {
		return false, false, e
	}
	var what []string
	for _, e := range resp.Errors {
		switch {
		case strings.Contains(e.What, "index is stale"), strings.Contains(e.What, "failed index check"):
			stale = true
		case strings.Contains(e.What, "doesn't exist"):
			missing = true
		default:
			what = append(what, e.What)
		}
	}
	if len(what) > 0 {
		return false, false, fmt.Errorf("transaction failed: %s", strings.Join(what, "; "))
	}
	return stale, missing, nil
}

// Put writes value at key. With opts.TTL > 0, as with kvtools, the key is
// tied to a session with that TTL (created, or renewed if the key already
// has one) and deleted when the session expires: Put it again within the
// TTL to keep it. Stock Consul agents refuse session TTLs under 10s.
func (s *kv) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	k, err := normalize(key)
	if err != nil {
		return err
	}
	p := &api.KVPair{Key: k, Value: value, Flags: api.LockFlagValue}
	w := (&api.WriteOptions{}).WithContext(ctx)
	if opts == nil || opts.TTL <= 0 {
		_, err := s.client.KV().Put(p, w)
		return s.fail("put", err)
	}
	session, err := s.ttlSession(ctx, k, opts.TTL)
	if err != nil {
		return s.fail("put", err)
	}
	p.Session = session
	ok, _, err := s.client.KV().Acquire(p, w)
	if err != nil {
		return s.fail("put", err)
	}
	if !ok {
		return fmt.Errorf("consul: put %q with TTL: the key is held by another session", k)
	}
	return nil
}

// ttlSession renews the session holding key, or creates one that deletes
// the key when it expires.
func (s *kv) ttlSession(ctx context.Context, key string, ttl time.Duration) (string, error) {
	w := (&api.WriteOptions{}).WithContext(ctx)
	if p, _, err := s.client.KV().Get(key, query(ctx, true)); err != nil {
		return "", err
	} else if p != nil && p.Session != "" {
		entry, _, err := s.client.Session().Renew(p.Session, w)
		if err != nil {
			return "", err
		}
		if entry != nil {
			return p.Session, nil
		}
	}
	id, _, err := s.client.Session().Create(&api.SessionEntry{
		Behavior:  api.SessionBehaviorDelete,
		TTL:       (ttl / 2).String(), // Consul invalidates a session up to 2 TTLs after its last renewal
		LockDelay: time.Millisecond,
	}, w)
	return id, err
}

// Delete removes key; store.ErrKeyNotFound if it does not exist. The read
// and the delete are one transaction.
func (s *kv) Delete(ctx context.Context, key string) error {
	k, err := normalize(key)
	if err != nil {
		return err
	}
	for {
		p, _, err := s.client.KV().Get(k, query(ctx, true))
		if err != nil {
			return s.fail("delete", err)
		}
		if p == nil {
			return store.ErrKeyNotFound
		}
		// The index only: the key was just read, whatever its value.
		ok, err := s.AtomicDelete(ctx, k, &store.KVPair{Key: k, LastIndex: p.ModifyIndex})
		if ok || !errors.Is(err, store.ErrKeyModified) {
			return err
		}
		// Changed meanwhile: delete the new version.
	}
}

// AtomicPut creates key (previous nil) or replaces it if its ModifyIndex
// is still previous.LastIndex, with Consul's compare-and-swap run in a
// transaction (batched with concurrent AtomicPuts under load), whose reply
// carries the new ModifyIndex. It returns exactly the pair written (value
// given, new index): unlike kvtools/consul, it does not read the key again
// afterwards, which could return a later writer's pair, or fail after a
// successful write.
func (s *kv) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, _ *store.WriteOptions) (bool, *store.KVPair, error) {
	k, err := normalize(key)
	if err != nil {
		return false, nil, err
	}
	op := &api.KVTxnOp{Verb: api.KVCAS, Key: k, Value: value, Flags: api.LockFlagValue}
	if previous != nil {
		if previous.LastIndex == 0 { // would mean "create"
			return false, nil, store.ErrKeyModified
		}
		op.Index = previous.LastIndex
	}
	r := s.writes.do(ctx, op)
	if r.err != nil {
		return false, nil, s.fail("atomic put", r.err)
	}
	if r.failed != nil {
		stale, _, err := conflict(&api.TxnResponse{Errors: r.failed})
		switch {
		case err != nil:
			return false, nil, s.fail("atomic put", err)
		case !stale:
			return false, nil, fmt.Errorf("consul: atomic put: transaction failed: %s", txnErrors(r.failed))
		case previous == nil:
			return false, nil, store.ErrKeyExists
		default:
			return false, nil, store.ErrKeyModified
		}
	}
	if r.kv.ModifyIndex == 0 {
		return false, nil, fmt.Errorf("consul: atomic put: the write succeeded but its reply has no index")
	}
	return true, &store.KVPair{Key: k, Value: value, LastIndex: r.kv.ModifyIndex}, nil
}

// FencedPut writes value at key (without a session: no TTL) if guardKey
// still holds guard: its value and its ModifyIndex. Consul's transactions
// compare an index, never a value, so FencedPut first reads guardKey
// (consistent) and refuses unless it holds guard.Value at guard.LastIndex,
// then writes in one Consul transaction: an index check of guardKey and a
// set of key. When the check fails (guardKey changed or no longer exists)
// Consul rolls the transaction back. Either refusal matches
// fenced.ErrGuardChanged; other failures are mapped as Put's.
//
// What remains: the value is compared at the read, not in the
// transaction. A guardKey written anew with another value at the very
// same ModifyIndex between the read and the transaction (a server that
// lost its data and handed the index out again within that round trip)
// is not refused.
func (s *kv) FencedPut(ctx context.Context, key string, value []byte, guardKey string, guard *store.KVPair) error {
	k, g, idx, err := adapter.FenceArgs("consul", key, guardKey, guard, normalize,
		func(i uint64) (uint64, bool) { return i, i != 0 }) // 0 would mean "any"
	if err != nil {
		return err
	}
	found, same, err := s.holds(ctx, g, guard)
	if err != nil {
		return s.fail("fenced put", err)
	}
	if !found || !same {
		return adapter.GuardChanged("consul", key)
	}
	ok, resp, err := s.txn(ctx, api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVCheckIndex, Key: g, Index: idx}},
		{KV: &api.KVTxnOp{Verb: api.KVSet, Key: k, Value: value, Flags: api.LockFlagValue}},
	})
	if err != nil {
		return s.fail("fenced put", err)
	}
	if ok {
		return nil
	}
	stale, missing, err := conflict(resp)
	switch {
	case err != nil:
		return s.fail("fenced put", err)
	case stale || missing:
		return adapter.GuardChanged("consul", key)
	default:
		return fmt.Errorf("consul: fenced put: transaction failed: %v", resp.Errors)
	}
}

// AtomicDelete deletes key if its ModifyIndex is still previous.LastIndex
// (an index check and a delete in one transaction): store.ErrKeyNotFound if
// it does not exist, store.ErrKeyModified if it changed. When
// previous.Value is not nil, a consistent read first checks that the key
// still holds that value at that index, so that a key written anew at an
// index handed out again is not taken for the one previous was read from;
// as in FencedPut, a rewrite at the same index between the read and the
// transaction is not seen.
func (s *kv) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	if previous == nil {
		return false, store.ErrPreviousNotSpecified
	}
	k, err := normalize(key)
	if err != nil {
		return false, err
	}
	if previous.Value != nil {
		found, same, err := s.holds(ctx, k, previous)
		switch {
		case err != nil:
			return false, s.fail("atomic delete", err)
		case !found:
			return false, store.ErrKeyNotFound
		case !same:
			return false, store.ErrKeyModified
		}
	}
	ok, resp, err := s.txn(ctx, api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVCheckIndex, Key: k, Index: previous.LastIndex}},
		{KV: &api.KVTxnOp{Verb: api.KVDelete, Key: k}},
	})
	if err != nil {
		return false, s.fail("atomic delete", err)
	}
	if ok {
		return true, nil
	}
	stale, missing, err := conflict(resp)
	switch {
	case err != nil:
		return false, s.fail("atomic delete", err)
	case missing:
		return false, store.ErrKeyNotFound
	case stale:
		return false, store.ErrKeyModified
	default:
		return false, fmt.Errorf("consul: atomic delete: transaction failed: %v", resp.Errors)
	}
}

// holds reads key (a Consul key) consistently: found reports whether it
// exists, same whether it holds pair's value at pair's index.
func (s *kv) holds(ctx context.Context, key string, pair *store.KVPair) (found, same bool, err error) {
	p, err := s.get(ctx, key, true)
	if err != nil || p == nil {
		return false, false, err
	}
	return true, p.ModifyIndex == pair.LastIndex && bytes.Equal(p.Value, pair.Value), nil
}

// dir returns the Consul key of directory without its trailing "/".
func dir(directory string) (string, error) {
	k, err := normalize(directory)
	if err != nil {
		return "", err
	}
	k = strings.TrimRight(k, "/")
	if k == "" {
		return "", errEmptyKey
	}
	return k, nil
}

// List returns every key below directory ("dir/..."), at any depth,
// sorted, without directory itself ("dir" or "dir/"); store.ErrKeyNotFound
// when neither directory nor anything below it exists. Unlike kvtools, it
// does not return sibling keys that merely share the prefix ("dirX").
func (s *kv) List(ctx context.Context, directory string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	base, err := dir(directory)
	if err != nil {
		return nil, err
	}
	ps, meta, err := s.client.KV().List(base, query(ctx, isConsistent(opts)))
	if err != nil {
		return nil, s.fail("list", err)
	}
	pairs, found := children(base, ps)
	if !found && meta != nil && meta.ResultsFilteredByACLs {
		// The agent left out keys the token may not read: say so rather
		// than report the directory missing.
		return nil, &ACLError{Op: "list", Err: errPermissionDenied, Permission: "key:read", Resource: base + "/", Anonymous: s.anonymous}
	}
	if !found {
		return nil, store.ErrKeyNotFound
	}
	return pairs, nil
}

// children keeps the pairs below base; found reports whether base, base/
// or anything below exists.
func children(base string, ps api.KVPairs) (pairs []*store.KVPair, found bool) {
	pairs = []*store.KVPair{}
	for _, p := range ps {
		switch {
		case p.Key == base || p.Key == base+"/":
			found = true
		case strings.HasPrefix(p.Key, base+"/"):
			found = true
			pairs = append(pairs, pairOf(p))
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].Key < pairs[j].Key })
	return pairs, found
}

// DeleteTree deletes directory ("dir" and "dir/") and every key below it,
// in one transaction. Unlike kvtools, sibling keys that merely share the
// prefix ("dirX") are kept. Deleting nothing is not an error.
func (s *kv) DeleteTree(ctx context.Context, directory string) error {
	base, err := dir(directory)
	if err != nil {
		return err
	}
	ok, resp, err := s.txn(ctx, api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVDeleteTree, Key: base + "/"}},
		{KV: &api.KVTxnOp{Verb: api.KVDelete, Key: base}},
	})
	if err != nil {
		return s.fail("delete tree", err)
	}
	if !ok {
		if e := deniedIn(resp.Errors); e != nil {
			return s.fail("delete tree", e)
		}
		return fmt.Errorf("consul: delete tree: transaction failed: %v", resp.Errors)
	}
	return nil
}
