package etcd

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"go.uber.org/goleak"
)

// Environment variables naming the test servers (see scripts/README.md).
const (
	envSingle  = "LEADERSHIP_ETCD"         // one member, host:port
	envCluster = "LEADERSHIP_ETCD_CLUSTER" // members, comma-separated
)

// hangBound is how long a call that should end by a timeout of a second or
// less may take before the test calls it hung: generous, since the machine
// running the tests may be loaded. The time taken is logged.
const hangBound = 10 * time.Second

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// kvtools' NewLock starts a goroutine that waits for
		// LockOptions.RenewLock to close (a private channel nobody ever
		// closes when RenewLock is nil) and nothing else, so it outlives
		// Close for ever. Only valkeyrie's lock tests (suite_test.go)
		// create locks; the election engine never does.
		goleak.IgnoreTopFunction("github.com/kvtools/etcdv3.(*Store).NewLock.func1"),
	)
}

// endpointsFrom returns the endpoints in the environment variable env, or
// skips the test.
func endpointsFrom(t *testing.T, env string) []string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		t.Skipf("%s is not set: this test needs a running etcd (scripts/servers.sh start etcd etcd-cluster; eval \"$(scripts/servers.sh env)\")", env)
	}
	return strings.Split(v, ",")
}

// serverConfig is the Config of the single-member test server.
func serverConfig(t *testing.T) Config {
	t.Helper()
	return Config{Endpoints: endpointsFrom(t, envSingle)}
}

// openClient opens one client, as a separate process would, and closes it
// at cleanup.
func openClient(t *testing.T, cfg Config) store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open(%v): %v", cfg.Endpoints, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

var keySeq atomic.Uint64

// uniqueKey returns a key no other test, run or process uses.
func uniqueKey(t *testing.T) string {
	return fmt.Sprintf("leadership-test/etcd/%s/%d-%d-%d", strings.ReplaceAll(t.Name(), "/", "_"),
		os.Getpid(), time.Now().UnixNano(), keySeq.Add(1))
}

// refusedAddr returns an address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// hungAddr returns the address of a server that accepts connections and
// never answers; it closes them at cleanup.
func hungAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// recv waits up to d for the next pair on ch; ok is false if ch closed or
// nothing came.
func recv(t *testing.T, ch <-chan *store.KVPair, d time.Duration) (*store.KVPair, bool) {
	t.Helper()
	select {
	case p, ok := <-ch:
		return p, ok
	case <-time.After(d):
		return nil, false
	}
}

// prefixed runs valkeyrie's testsuite, which uses fixed key names, under
// a unique prefix on the shared test server. Keys in returned pairs are
// given back without the prefix.
type prefixed struct {
	store.Store
	p string
}

func (s prefixed) k(key string) string { return s.p + strings.TrimPrefix(key, "/") }

func (s prefixed) strip(pair *store.KVPair) *store.KVPair {
	if pair == nil {
		return nil
	}
	c := *pair
	c.Key = strings.TrimPrefix(strings.TrimPrefix(c.Key, "/"), s.p)
	return &c
}

func (s prefixed) stripAll(pairs []*store.KVPair) []*store.KVPair {
	if pairs == nil {
		return nil
	}
	out := make([]*store.KVPair, len(pairs))
	for i, p := range pairs {
		out[i] = s.strip(p)
	}
	return out
}

func (s prefixed) Put(ctx context.Context, key string, value []byte, opts *store.WriteOptions) error {
	return s.Store.Put(ctx, s.k(key), value, opts)
}

func (s prefixed) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	p, err := s.Store.Get(ctx, s.k(key), opts)
	return s.strip(p), err
}

func (s prefixed) Delete(ctx context.Context, key string) error {
	return s.Store.Delete(ctx, s.k(key))
}

func (s prefixed) Exists(ctx context.Context, key string, opts *store.ReadOptions) (bool, error) {
	return s.Store.Exists(ctx, s.k(key), opts)
}

func (s prefixed) List(ctx context.Context, dir string, opts *store.ReadOptions) ([]*store.KVPair, error) {
	ps, err := s.Store.List(ctx, s.k(dir), opts)
	return s.stripAll(ps), err
}

func (s prefixed) DeleteTree(ctx context.Context, dir string) error {
	return s.Store.DeleteTree(ctx, s.k(dir))
}

func (s prefixed) AtomicPut(ctx context.Context, key string, value []byte, previous *store.KVPair, opts *store.WriteOptions) (bool, *store.KVPair, error) {
	if previous != nil {
		c := *previous
		c.Key = s.k(c.Key)
		previous = &c
	}
	ok, p, err := s.Store.AtomicPut(ctx, s.k(key), value, previous, opts)
	return ok, s.strip(p), err
}

func (s prefixed) AtomicDelete(ctx context.Context, key string, previous *store.KVPair) (bool, error) {
	if previous != nil {
		c := *previous
		c.Key = s.k(c.Key)
		previous = &c
	}
	return s.Store.AtomicDelete(ctx, s.k(key), previous)
}

func (s prefixed) NewLock(ctx context.Context, key string, opts *store.LockOptions) (store.Locker, error) {
	return s.Store.NewLock(ctx, s.k(key), opts)
}

func (s prefixed) Watch(ctx context.Context, key string, opts *store.ReadOptions) (<-chan *store.KVPair, error) {
	in, err := s.Store.Watch(ctx, s.k(key), opts)
	if err != nil {
		return nil, err
	}
	return relay(ctx, in, s.strip), nil
}

func (s prefixed) WatchTree(ctx context.Context, dir string, opts *store.ReadOptions) (<-chan []*store.KVPair, error) {
	in, err := s.Store.WatchTree(ctx, s.k(dir), opts)
	if err != nil {
		return nil, err
	}
	return relay(ctx, in, s.stripAll), nil
}

// relay forwards in to the returned channel through f until in closes.
// The wrapped stores close in when ctx ends.
func relay[T any](ctx context.Context, in <-chan T, f func(T) T) <-chan T {
	out := make(chan T)
	go func() {
		defer close(out)
		for v := range in {
			select {
			case out <- f(v):
			case <-ctx.Done():
				for range in {
				}
				return
			}
		}
	}()
	return out
}

// gatedAddr returns the address of a server that accepts connections and
// holds them unanswered, as a hung server does, until release is called;
// from then on every connection, held or new, is forwarded to target.
func gatedAddr(t *testing.T, target string) (addr string, release func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	pipe := func(a, b net.Conn) {
		_, _ = io.Copy(a, b)
		_ = a.Close()
		_ = b.Close()
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			wg.Go(func() {
				<-gate
				s, err := net.Dial("tcp", target)
				if err != nil {
					_ = c.Close()
					return
				}
				track(s)
				wg.Go(func() { pipe(s, c) })
				pipe(c, s)
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		once.Do(func() { close(gate) })
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String(), func() { once.Do(func() { close(gate) }) }
}
