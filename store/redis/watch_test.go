package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	kvredis "github.com/kvtools/redis"
	"github.com/kvtools/valkeyrie"
	"github.com/kvtools/valkeyrie/store"
	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/internal/guard"
	"github.com/leadership-go/leadership/store/internal/storetest"
	"github.com/leadership-go/leadership/store/internal/storetest/electiontest"
)

// hubOf returns the watch hub of a store from Open or Wrap.
func hubOf(t *testing.T, s store.Store) *hub {
	t.Helper()
	inner := guard.Unwrap(s)
	if inner == nil {
		t.Fatalf("%T is not a guarded store", s)
	}
	f, ok := inner.(*fixed)
	if !ok || f.hub == nil {
		t.Fatalf("no watch hub in %T", inner)
	}
	return f.hub
}

// rawClient is a go-redis client of the test server, closed at cleanup.
func rawClient(t *testing.T, cfg Config) *goredis.Client {
	t.Helper()
	c := goredis.NewClient(&goredis.Options{Addr: cfg.Endpoints[0], DB: cfg.DB})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// numSub is the number of subscribers of a channel on the server.
func numSub(t *testing.T, cfg Config, channel string) int64 {
	t.Helper()
	m, err := rawClient(t, cfg).PubSubNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatal(err)
	}
	return m[channel]
}

// expectValue reads ch until a pair with value want comes (events may
// repeat), for at most d.
func expectValue(t *testing.T, ch <-chan *store.KVPair, want string, d time.Duration) *store.KVPair {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case p, ok := <-ch:
			if !ok {
				t.Fatalf("waiting for %q: channel closed", want)
			}
			if string(p.Value) == want {
				return p
			}
		case <-deadline:
			t.Fatalf("no event with value %q within %v", want, d)
		}
	}
}

// The first event is the current state; a missing key is a pair with
// only its Key.
func TestWatchFirstEvent(t *testing.T) {
	cfg := serverConfig(t)
	s := openClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := uniqueKey(t)
	defer func() { _ = s.Delete(context.Background(), key) }()

	ch, err := s.Watch(ctx, "/"+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := storetest.Recv(ch, 5*time.Second)
	if !ok || p.Key != key || p.Value != nil || p.LastIndex != 0 {
		t.Fatalf("first event on a missing key: %+v %v", p, ok)
	}
	if err := s.Put(ctx, key, []byte("v1"), nil); err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, "v1", 5*time.Second)

	// A second watch of the same key, on the same subscription, starts
	// with the current value; the first sees nothing new.
	ch2, err := s.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := storetest.Recv(ch2, 5*time.Second); !ok || string(p.Value) != "v1" || p.Key != key {
		t.Fatalf("second watch's first event: %+v %v", p, ok)
	}
	if p, ok := storetest.Recv(ch, 200*time.Millisecond); ok {
		t.Fatalf("the first watch got %+v when the second started", p)
	}
	if n := numSub(t, cfg, "__keyspace@0__:"+key); n != 1 {
		t.Fatalf("%d subscriptions for two watches of one key", n)
	}
}

// A keyspace notification is only a hint: any client with PUBLISH rights
// on the channel can send one. Forged "del", "expired" and "set" events on
// a key that holds v1 make the watch re-read it: nothing it delivers
// before the real write of v2 (sent after the forgeries) is anything but
// v1, never a deleted key.
func TestWatchForgedNotification(t *testing.T) {
	cfg := serverConfig(t)
	s := openClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := uniqueKey(t)
	defer func() { _ = s.Delete(context.Background(), key) }()
	if err := s.Put(ctx, key, []byte("v1"), nil); err != nil {
		t.Fatal(err)
	}
	ch, err := s.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, "v1", 5*time.Second)
	forger := rawClient(t, cfg)
	for _, event := range []string{"del", "expired", "set"} {
		if err := forger.Publish(ctx, "__keyspace@0__:"+key, event).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, key, []byte("v2"), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case p, ok := <-ch:
			if !ok {
				t.Fatal("channel closed")
			}
			switch string(p.Value) {
			case "v2":
				return
			case "v1":
			default:
				t.Fatalf("after forged notifications the watch delivered %+v, want v1 until v2", p)
			}
		case <-deadline:
			t.Fatal("no event with v2 within 10s")
		}
	}
}

// Changes in quick succession reach a watcher in order: the values it
// receives never go back, and the last one is the last written.
func TestWatchOrder(t *testing.T) {
	s, other := openTwo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := uniqueKey(t)
	defer func() { _ = other.Delete(context.Background(), key) }()

	ch, err := s.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	const n = 300
	go func() {
		for i := 1; i <= n; i++ {
			_ = other.Put(ctx, key, fmt.Appendf(nil, "%04d", i), nil)
		}
	}()
	last := ""
	got := 0
	for last != fmt.Sprintf("%04d", n) {
		p, ok := storetest.Recv(ch, 5*time.Second)
		if !ok {
			t.Fatalf("no event after %q", last)
		}
		if v := string(p.Value); v != "" {
			if v < last {
				t.Fatalf("%q after %q", v, last)
			}
			last = v
		}
		got++
		time.Sleep(time.Millisecond) // a slow reader: states coalesce
	}
	t.Logf("%d writes, %d events", n, got)
}

// Watches of a directory see its keys change; glob characters in the
// directory are matched literally.
func TestWatchTreeEvents(t *testing.T) {
	s, other := openTwo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := uniqueKey(t)
	dir := base + "/d?"
	defer func() {
		for _, k := range []string{dir + "/a", dir + "/b", base + "/dx/a"} {
			_ = other.Delete(context.Background(), k)
		}
	}()
	if err := other.Put(ctx, dir+"/a", []byte("a"), nil); err != nil {
		t.Fatal(err)
	}
	ch, err := s.WatchTree(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ps := storetest.NextList(t, ch); len(ps) != 1 || ps[0].Key != dir+"/a" || string(ps[0].Value) != "a" {
		t.Fatalf("first: %+v", ps)
	}
	if err := other.Put(ctx, dir+"/b", []byte("b"), nil); err != nil {
		t.Fatal(err)
	}
	if ps := storetest.NextList(t, ch); len(ps) != 2 {
		t.Fatalf("after a put: %d pairs", len(ps))
	}
	// "d?" is not a pattern: a write under dx does not wake the watch.
	if err := other.Put(ctx, base+"/dx/a", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case ps := <-ch:
		t.Fatalf("event for a key outside the directory: %+v", ps)
	case <-time.After(300 * time.Millisecond):
	}
	if err := other.Delete(ctx, dir+"/a"); err != nil {
		t.Fatal(err)
	}
	if ps := storetest.NextList(t, ch); len(ps) != 1 || ps[0].Key != dir+"/b" {
		t.Fatalf("after a delete: %+v", ps)
	}
	if err := other.Delete(ctx, dir+"/b"); err != nil {
		t.Fatal(err)
	}
	if ps := storetest.NextList(t, ch); ps == nil || len(ps) != 0 {
		t.Fatalf("empty directory: %#v", ps)
	}
}

// A thousand watches share one Pub/Sub connection, each sees its key, and
// cancelling them drops every subscription.
func TestManyWatches(t *testing.T) {
	cfg := serverConfig(t)
	s, other := openClient(t, cfg), openClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := uniqueKey(t)
	const n = 1000
	keys := make([]string, n)
	chans := make([]<-chan *store.KVPair, n)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	start := time.Now()
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/%d", base, i)
		ch, err := s.Watch(wctx, keys[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		chans[i] = ch
	}
	defer func() {
		for _, k := range keys {
			_ = other.Delete(context.Background(), k)
		}
	}()
	for i, ch := range chans {
		if p, ok := storetest.Recv(ch, 10*time.Second); !ok || p.Key != keys[i] || p.Value != nil {
			t.Fatalf("watch %d: first event %+v %v", i, p, ok)
		}
	}
	t.Logf("%d watches delivered their first state after %v", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	for i, k := range keys {
		if err := other.Put(ctx, k, fmt.Appendf(nil, "v%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i, ch := range chans {
		expectValue(t, ch, fmt.Sprintf("v%d", i), 10*time.Second)
	}
	t.Logf("%d puts seen by their watches after %v", n, time.Since(start).Round(time.Millisecond))

	h := hubOf(t, s)
	if st := h.client.PoolStats().PubSubStats; st.Created != 1 || st.Active != 1 {
		t.Fatalf("Pub/Sub connections: %+v, want one", st)
	}
	rc := rawClient(t, cfg)
	pattern := "__keyspace@0__:" + globEscape(base) + "/*"
	if chs, err := rc.PubSubChannels(ctx, pattern).Result(); err != nil || len(chs) != n {
		t.Fatalf("%d channels subscribed (%v), want %d", len(chs), err, n)
	}
	wcancel()
	for _, ch := range chans {
		for range ch {
		}
	}
	storetest.WaitFor(t, 5*time.Second, "every subscription dropped", func() bool {
		chs, err := rc.PubSubChannels(ctx, pattern).Result()
		return err == nil && len(chs) == 0
	})
}

// Watches whose readers walk away (never read, or stop reading without
// cancelling) hold nothing once the store is closed, and their channels
// are closed.
func TestWatchReaderWalksAway(t *testing.T) {
	cfg, other, leaks, key := leakTest(t)
	ctx := context.Background()

	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var chans []<-chan *store.KVPair
	for i := range 10 {
		ch, err := s.Watch(ctx, key, nil) // never cancelled
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			<-ch // read once, then walk away
		}
		chans = append(chans, ch)
	}
	for i := range 50 {
		if err := other.Put(ctx, key, fmt.Appendf(nil, "%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i, ch := range chans {
		drained := make(chan struct{})
		go func() {
			for range ch {
			}
			close(drained)
		}()
		select {
		case <-drained:
		case <-time.After(10 * time.Second):
			t.Fatalf("watch %d: channel not closed by Close", i)
		}
	}
	// The guard may answer (nil, nil) when its Close wins the race.
	if ch, err := s.Watch(ctx, key, nil); err == nil && ch != nil {
		t.Fatal("Watch on a closed store gave a channel")
	}
	goleak.VerifyNone(t, leaks)
}

// The regression: kvtools' watch left a goroutine blocked for ever in
// (*subscribe).receiveLoop when its connection was reset (1-2 per round
// of a benchmark that kills the client's forwarder). Through a forwarder
// that is killed several times and then closed, watches (read or walked
// away from) are re-delivered the current state after each reconnection,
// and nothing is left after Close.
func TestWatchThroughKilledForwarder(t *testing.T) {
	cfg, other, leaks, key := leakTest(t)
	ctx := context.Background()

	fwd := electiontest.Forwarder(t, cfg.Endpoints[0])
	s, err := Open(ctx, Config{Endpoints: []string{fwd.Addr()}, RequestTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, "", 5*time.Second)
	var abandoned []<-chan *store.KVPair
	for round := range 3 {
		// A watch no one reads, and one whose reader gives up.
		a, err := s.Watch(ctx, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		abandoned = append(abandoned, a)
		wctx, wcancel := context.WithCancel(ctx)
		b, err := s.Watch(wctx, key+"/other", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = b
		v := fmt.Sprintf("live-%d", round)
		if err := other.Put(ctx, key, []byte(v), nil); err != nil {
			t.Fatal(err)
		}
		expectValue(t, ch, v, 5*time.Second)

		// A change the connection cannot deliver (cut), then a reset:
		// the reconnected watch re-delivers the current state.
		fwd.Cut()
		v = fmt.Sprintf("missed-%d", round)
		if err := other.Put(ctx, key, []byte(v), nil); err != nil {
			t.Fatal(err)
		}
		fwd.Kill()
		fwd.Heal()
		start := time.Now()
		expectValue(t, ch, v, 10*time.Second)
		t.Logf("round %d: state re-delivered %v after the reset", round, time.Since(start).Round(time.Millisecond))
		wcancel()
	}
	// The client vanishes for good; writes go on.
	_ = fwd.Close()
	for i := range 5 {
		_ = other.Put(ctx, key, fmt.Appendf(nil, "gone-%d", i), nil)
	}
	time.Sleep(300 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	for range ch {
	}
	for _, a := range abandoned {
		for range a {
		}
	}
	goleak.VerifyNone(t, leaks)
}

// The benchmark's crash round: the client's forwarder is closed while
// notifications stream in. On kvtools' watch this left (*subscribe).
// receiveLoop blocked for ever in a channel send, several per run of
// this test (checked against the previous version of this package).
func TestWatchForwarderClosedDuringWrites(t *testing.T) {
	cfg, other, leaks, key := leakTest(t)
	ctx := context.Background()
	for round := range 10 {
		fwd, err := leadershiptest.NewForwarder(cfg.Endpoints[0])
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(ctx, Config{Endpoints: []string{fwd.Addr()}, RequestTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			ch, err := s.Watch(ctx, key, nil)
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 0 { // read; the others are walked away from
				go func() {
					for range ch {
					}
				}()
			}
		}
		time.Sleep(50 * time.Millisecond)
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_ = other.Put(ctx, key, fmt.Appendf(nil, "%d-%d", round, i), nil)
			}
		}()
		time.Sleep(30 * time.Millisecond)
		_ = fwd.Close()
		time.Sleep(30 * time.Millisecond)
		close(stop)
		<-done
		_ = s.Close()
	}
	goleak.VerifyNone(t, leaks)
}

// A connection that stops answering (a partition: no reset) is declared
// dead after two health intervals and replaced; the change made meanwhile
// is delivered once the network heals.
func TestWatchHungConnectionReplaced(t *testing.T) {
	cfg := serverConfig(t)
	other := openClient(t, cfg)
	ctx := context.Background()
	key := uniqueKey(t)
	defer func() { _ = other.Delete(ctx, key) }()

	fwd := electiontest.Forwarder(t, cfg.Endpoints[0])
	s := openClient(t, Config{Endpoints: []string{fwd.Addr()}, RequestTimeout: 500 * time.Millisecond})
	h := hubOf(t, s)
	h.health = 200 * time.Millisecond // before the first watch starts the hub
	ch, err := s.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, "", 5*time.Second)
	fwd.Cut()
	if err := other.Put(ctx, key, []byte("during the cut"), nil); err != nil {
		t.Fatal(err)
	}
	storetest.WaitFor(t, 5*time.Second, "a new Pub/Sub connection", func() bool {
		return h.client.PoolStats().PubSubStats.Created >= 2
	})
	fwd.Heal()
	expectValue(t, ch, "during the cut", 10*time.Second)
}

// Wrap reaches the go-redis client of a store from valkeyrie.NewStore and
// runs its watches on the hub, not on kvtools' watch.
func TestWrapWatches(t *testing.T) {
	cfg := serverConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := valkeyrie.NewStore(ctx, kvredis.StoreName, cfg.Endpoints, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kvtoolsClient(kv) == nil {
		t.Fatal("kvtools' client not reached")
	}
	s := wrap(kv, time.Second)
	defer s.Close()
	_ = hubOf(t, s)
	other := openClient(t, cfg)
	key := uniqueKey(t)
	defer func() { _ = other.Delete(context.Background(), key) }()
	ch, err := s.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	expectValue(t, ch, "", 5*time.Second)
	if err := other.Put(ctx, key, []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	if p := expectValue(t, ch, "x", 5*time.Second); p.Key != key {
		t.Fatalf("pair %+v", p)
	}
	if n := countStacks("github.com/kvtools/redis.(*subscribe).receiveLoop("); n != 0 {
		t.Fatalf("%d kvtools watch goroutines", n)
	}
	// A store other than kvtools' keeps its own watches.
	if kvtoolsClient(&scripted{}) != nil {
		t.Fatal("client found in a store that is not kvtools'")
	}
}

func TestGlobEscape(t *testing.T) {
	for in, want := range map[string]string{
		"a/b":      "a/b",
		`a*b?c[d]`: `a\*b\?c\[d\]`,
		`x\y`:      `x\\y`,
	} {
		if got := globEscape(in); got != want {
			t.Errorf("globEscape(%q) = %q, want %q", in, got, want)
		}
	}
}
