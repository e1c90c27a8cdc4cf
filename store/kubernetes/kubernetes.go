package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/kvtools/valkeyrie/store"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/leadership-go/leadership/store/internal/adapter"
)

// Store keeps each key in a Lease of one namespace. It implements
// valkeyrie's store.Store; see the package documentation for what each
// call does. Its methods may be called concurrently.
type Store struct {
	ns             string
	requestTimeout time.Duration
	leases         coordclient.LeaseInterface
	http           *http.Client
	conns          *conns

	// ctx ends at Close: every call and watch ends with it.
	ctx     context.Context
	cancel  context.CancelFunc
	watches sync.WaitGroup
	once    sync.Once

	// watchHook, when set (tests), is called at the points of a watch's
	// life that tests wait for; resumeHook, when set (tests), may change
	// the resourceVersion a watch is about to resume from.
	watchHook  func(event string)
	resumeHook func(rv string) string
}

// Every Store is a valkeyrie store.
var _ store.Store = (*Store)(nil)

// Open loads the client configuration cfg names, connects to its API
// server and checks, with a GET /version, that it answers over TLS and
// accepts the credentials, within cfg.DialTimeout (or ctx's earlier
// deadline). It does not check the Leases' rights: a client without them
// opens, and its calls fail with an *Error matching store.ErrPermission.
//
// Errors (the vocabulary of package github.com/leadership-go/leadership/store):
// a *store.ConfigError (store.ErrInvalidConfig) for an unusable Config or
// kubeconfig; an *Error matching store.ErrUnreachable, store.ErrTLS or
// store.ErrAuth when the server cannot be reached, is not trusted, or
// refuses the credentials. Nothing is left running after an error.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	rc, ns, err := cfg.load()
	if err != nil {
		return nil, err
	}
	cs := &conns{timeout: cfg.DialTimeout, dial: rc.Dial}
	rc.Dial = cs.dialContext
	if cfg.REST == nil {
		// client-go's default is 5 requests a second: one candidate
		// renewing a few elections would exceed it.
		rc.QPS = -1
	}
	if rc.WarningHandler == nil && rc.WarningHandlerWithContext == nil {
		rc.WarningHandler = rest.NoWarnings{}
	}
	if rc.UserAgent == "" {
		rc.UserAgent = "leadership-go/store-kubernetes"
	}
	if rc.ContentType == "" {
		rc.ContentType = "application/vnd.kubernetes.protobuf"
		rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	// client-go's errors quote the server URL, which may hold a password
	// (https://admin:PASSWORD@[127.0.0.1, a typo'd address): each is
	// redacted where it is wrapped, after it is classified.
	secrets := restSecrets(rc)
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return nil, invalid("Kubeconfig", "cannot build an HTTP client from the configuration", adapter.Redact(err, secrets...))
	}
	client, err := coordclient.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, invalid("Kubeconfig", "cannot build a client from the configuration", adapter.Redact(err, secrets...))
	}
	s := &Store{
		ns:             ns,
		requestTimeout: cfg.RequestTimeout,
		leases:         client.Leases(ns),
		http:           hc,
		conns:          cs,
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())

	pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	_, err = client.RESTClient().Get().AbsPath("/version").Do(pctx).Raw()
	cancel()
	if err != nil && !apierrors.IsForbidden(err) { // forbidden: authenticated, which is all Open checks
		_ = s.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		kind := kindOf(err)
		if kind == errUnexpected {
			kind = errNotReachable // an answer that is not the API server's
		}
		return nil, &Error{Op: "open", Namespace: ns, Kind: kind, Err: adapter.Redact(fmt.Errorf("%s: %w", redactedHost(rc.Host), err), secrets...)}
	}
	return s, nil
}

// redactedHost is the API server's address as errors show it, with a
// password in it (https://user:password@host, which a kubeconfig allows)
// masked.
func redactedHost(host string) string {
	if u, err := url.Parse(host); err == nil && u.User != nil {
		return u.Redacted()
	}
	return host
}

// call returns the context of one request: ctx, with the Store's
// RequestTimeout when ctx has no deadline, ended by Close too.
func (s *Store) call(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if s.ctx.Err() != nil {
		return nil, nil, errClosed
	}
	var c context.Context
	var cancel context.CancelFunc
	if _, ok := ctx.Deadline(); ok {
		c, cancel = context.WithCancel(ctx)
	} else {
		c, cancel = context.WithTimeout(ctx, s.requestTimeout)
	}
	stop := context.AfterFunc(s.ctx, cancel)
	return c, func() { stop(); cancel() }, nil
}

// fail makes the *Error of a failed request.
func (s *Store) fail(op, name, key string, err error) error {
	kind := kindOf(err)
	if s.ctx.Err() != nil {
		kind = errClosed
	}
	return &Error{Op: op, Namespace: s.ns, Lease: name, Key: key, Kind: kind, Err: err}
}

// keyError is the *Error of a key that maps to no Lease name.
func (s *Store) keyError(op, key string, err error) error {
	return &Error{Op: op, Namespace: s.ns, Key: key, Kind: errInvalidKey, Err: err}
}

// notSupported is the error of a call or option Leases cannot honour.
func notSupported(what string) error {
	return fmt.Errorf("kubernetes: %s: %w", what, store.ErrCallNotSupported)
}

// Get returns the value at key and the Lease's resourceVersion as
// LastIndex, or store.ErrKeyNotFound. The API server reads it from etcd
// with a quorum read (linearizable), whatever opts say.
func (s *Store) Get(ctx context.Context, key string, _ *store.ReadOptions) (*store.KVPair, error) {
	name, err := leaseName(key)
	if err != nil {
		return nil, s.keyError("get", key, err)
	}
	c, cancel, err := s.call(ctx)
	if err != nil {
		return nil, s.fail("get", name, key, err)
	}
	defer cancel()
	l, err := s.leases.Get(c, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, store.ErrKeyNotFound
		}
		return nil, s.fail("get", name, key, err)
	}
	pair, err := pairOf(key, l, false)
	if err != nil {
		return nil, s.fail("get", name, key, err)
	}
	return pair, nil
}

// Exists reports whether key's Lease exists.
func (s *Store) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	_, err := s.Get(ctx, key, opts)
	if errors.Is(err, store.ErrKeyNotFound) {
		return false, nil
	}
	return err == nil, err
}

// AtomicPut creates key's Lease when previous is nil (store.ErrKeyExists
// if it exists), or replaces it only if its resourceVersion is still
// previous.LastIndex (store.ErrKeyModified otherwise, store.ErrKeyNotFound
// if it was deleted). It returns the pair written. A TTL in opts is
// refused (store.ErrCallNotSupported): the API server expires nothing.
func (s *Store) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if opts != nil && opts.TTL > 0 {
		return false, nil, notSupported("a write with a TTL (the API server expires no object)")
	}
	name, err := leaseName(key)
	if err != nil {
		return false, nil, s.keyError("put", key, err)
	}
	c, cancel, err := s.call(ctx)
	if err != nil {
		return false, nil, s.fail("put", name, key, err)
	}
	defer cancel()
	var l *coordinationv1.Lease
	if previous == nil {
		l, err = s.create(c, key, name, value)
		if apierrors.IsAlreadyExists(err) {
			return false, nil, store.ErrKeyExists
		}
	} else {
		l, err = s.leases.Update(c, leaseFor(s.ns, name, value, versionOf(previous.LastIndex), time.Now()), metav1.UpdateOptions{})
		switch {
		case apierrors.IsConflict(err):
			return false, nil, store.ErrKeyModified
		case apierrors.IsNotFound(err):
			return false, nil, store.ErrKeyNotFound
		case err != nil:
			err = s.fail("update", name, key, err)
		}
	}
	if err != nil {
		return false, nil, err
	}
	index, err := indexOf(l.ResourceVersion)
	if err != nil {
		return false, nil, s.fail("put", name, key, err)
	}
	return true, &store.KVPair{Key: key, Value: value, LastIndex: index}, nil
}

// create creates key's Lease; a missing namespace is errNamespaceNotFound.
func (s *Store) create(ctx context.Context, key, name string, value []byte) (*coordinationv1.Lease, error) {
	l, err := s.leases.Create(ctx, leaseFor(s.ns, name, value, "", time.Now()), metav1.CreateOptions{})
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return l, err
	case apierrors.IsNotFound(err):
		return nil, &Error{Op: "create", Namespace: s.ns, Lease: name, Key: key, Kind: errNamespaceNotFound, Err: err}
	}
	return nil, s.fail("create", name, key, err)
}

// Put writes value at key, whatever it holds (a read, then a create or a
// conditional update, again while another writer comes between). A TTL
// is refused (store.ErrCallNotSupported).
func (s *Store) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	if opts != nil && opts.TTL > 0 {
		return notSupported("a write with a TTL (the API server expires no object)")
	}
	for {
		prev, err := s.Get(ctx, key, nil)
		if err != nil && !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
		_, _, err = s.AtomicPut(ctx, key, value, prev, nil)
		if !errors.Is(err, store.ErrKeyExists) && !errors.Is(err, store.ErrKeyModified) && !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
		if ctx.Err() != nil {
			return s.fail("put", "", key, ctx.Err())
		}
	}
}

// Delete deletes key's Lease, or returns store.ErrKeyNotFound.
func (s *Store) Delete(ctx context.Context, key string) error {
	return s.delete(ctx, key, nil)
}

// AtomicDelete deletes key's Lease only if its resourceVersion is still
// previous.LastIndex (store.ErrKeyModified otherwise, store.ErrKeyNotFound
// if it no longer exists).
func (s *Store) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	if previous == nil {
		return false, store.ErrPreviousNotSpecified
	}
	rv := versionOf(previous.LastIndex)
	if err := s.delete(ctx, key, &rv); err != nil {
		return false, err
	}
	return true, nil
}

func (s *Store) delete(ctx context.Context, key string, rv *string) error {
	name, err := leaseName(key)
	if err != nil {
		return s.keyError("delete", key, err)
	}
	c, cancel, err := s.call(ctx)
	if err != nil {
		return s.fail("delete", name, key, err)
	}
	defer cancel()
	opts := metav1.DeleteOptions{}
	if rv != nil {
		opts.Preconditions = &metav1.Preconditions{ResourceVersion: rv}
	}
	err = s.leases.Delete(c, name, opts)
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return store.ErrKeyNotFound
	case apierrors.IsConflict(err):
		return store.ErrKeyModified
	}
	return s.fail("delete", name, key, err)
}

// List returns the pairs of the keys below directory (directory/...), in
// Lease name order: none if only directory itself exists,
// store.ErrKeyNotFound if neither does. It lists
// every Lease of the namespace (one request) and keeps those whose key is
// below directory.
func (s *Store) List(ctx context.Context, directory string, _ *store.ReadOptions) ([]*store.KVPair, error) {
	c, cancel, err := s.call(ctx)
	if err != nil {
		return nil, s.fail("list", "", directory, err)
	}
	defer cancel()
	list, err := s.leases.List(c, metav1.ListOptions{})
	if err != nil {
		return nil, s.fail("list", "", directory, err)
	}
	dir := strings.Trim(directory, "/")
	pairs := []*store.KVPair{}
	dirExists := false
	for i := range list.Items {
		l := &list.Items[i]
		key, ok := keyOf(l.Name)
		if ok && key == dir {
			dirExists = true
		}
		if !ok || (dir != "" && !strings.HasPrefix(key, dir+"/")) {
			continue
		}
		pair, err := pairOf(key, l, false)
		if err != nil {
			return nil, s.fail("list", l.Name, key, err)
		}
		pairs = append(pairs, pair)
	}
	if len(pairs) == 0 && !dirExists {
		return nil, store.ErrKeyNotFound
	}
	return pairs, nil
}

// DeleteTree deletes the Leases of the keys below directory, one by one.
func (s *Store) DeleteTree(ctx context.Context, directory string) error {
	pairs, err := s.List(ctx, directory, nil)
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, p := range pairs {
		if err := s.Delete(ctx, p.Key); err != nil && !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
	}
	return nil
}

// WatchTree is not supported (store.ErrCallNotSupported): the election
// engine watches single keys only.
func (s *Store) WatchTree(context.Context, string, *store.ReadOptions) (<-chan []*store.KVPair, error) {
	return nil, notSupported("WatchTree")
}

// NewLock is not supported (store.ErrCallNotSupported): the election
// engine needs no lock of the store, and a Lease has no server-side
// expiry to build one on.
func (s *Store) NewLock(context.Context, string, *store.LockOptions) (store.Locker, error) {
	return nil, notSupported("NewLock")
}

// Close ends every watch (their channels close), waits for their
// goroutines, and closes the Store's connections. Later calls fail with
// an *Error matching store.ErrClosed (and store.ErrUnreachable). Close always returns nil; a second Close does nothing.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.watches.Wait()
		s.http.CloseIdleConnections()
		s.conns.closeAll()
	})
	return nil
}

// conns dials the Store's connections and closes them all at Close: the
// HTTP/2 connections client-go keeps open would otherwise outlive the
// Store, with their goroutines.
type conns struct {
	timeout time.Duration
	dial    func(ctx context.Context, network, address string) (net.Conn, error) // the configuration's own, or nil

	mu     sync.Mutex
	open   map[*trackedConn]struct{}
	closed bool
}

func (cs *conns) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	dial := cs.dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: cs.timeout, KeepAlive: 30 * time.Second}).DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, cs.timeout)
	defer cancel()
	c, err := dial(dctx, network, address)
	if err != nil {
		return nil, err
	}
	t := &trackedConn{Conn: c, owner: cs}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		_ = c.Close()
		return nil, errClosed
	}
	if cs.open == nil {
		cs.open = make(map[*trackedConn]struct{})
	}
	cs.open[t] = struct{}{}
	return t, nil
}

func (cs *conns) closeAll() {
	cs.mu.Lock()
	cs.closed = true
	open := cs.open
	cs.open = nil
	cs.mu.Unlock()
	for c := range open {
		_ = c.Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	owner *conns
	once  sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.owner.mu.Lock()
		delete(c.owner.open, c)
		c.owner.mu.Unlock()
	})
	return c.Conn.Close()
}
