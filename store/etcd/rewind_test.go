package etcd

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

// A watch opened while the server's revision was high, on a server that
// then restarts without its data: the etcd client resumes it from a
// revision the new server reaches only hundreds of writes later. A read
// of the store that shows the revision gone back ends it, so that the
// caller watches again; it never stays silent while the key changes.
func TestWatchEndsAfterServerRestartedEmpty(t *testing.T) {
	cfg := serverConfig(t)
	if !storetest.RestartAllowed() {
		t.Skip("LEADERSHIP_RESTART_SERVERS is not 1: this test wipes the shared etcd server")
	}
	s := openClient(t, cfg)
	key := uniqueKey(t)
	ctx := storetest.Context(t, 2*time.Minute)

	// Revisions the wiped server will not reach during the test.
	for i := range 300 {
		if err := s.Put(ctx, fmt.Sprintf("%s/fill/%d", key, i), []byte("x"), nil); err != nil {
			t.Fatalf("Put: %v", err)
		}
	}
	if err := s.Put(ctx, key, []byte("before"), nil); err != nil {
		t.Fatalf("Put: %v", err)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	events, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if p, ok := storetest.Recv(events, 10*time.Second); !ok || p == nil || string(p.Value) != "before" {
		t.Fatalf("first watch event %+v (ok %v), want value before", p, ok)
	}

	storetest.ServersScript(t, "restart", "--wipe", "etcd")
	restarted := time.Now()

	// Writes and reads of the store work again; the watch either sends
	// the new value or closes (the caller then watches again).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		err = s.Put(cctx, key, []byte("after"), nil)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write succeeds a minute after the server restarted empty: %v", err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		p, err := s.Get(ctx, key, &store.ReadOptions{Consistent: true})
		if err != nil && !errors.Is(err, store.ErrNotReachable) {
			t.Fatalf("Get: %v", err)
		}
		if err == nil && string(p.Value) != "after" {
			t.Fatalf("Get: value %q, want after", p.Value)
		}
		select {
		case p, ok := <-events:
			if ok && (p == nil || string(p.Value) != "after") {
				t.Fatalf("watch event %+v after the restart, want value after", p)
			}
			t.Logf("the watch %s %v after the restart", map[bool]string{true: "sent the new value", false: "closed"}[ok], time.Since(restarted).Round(time.Millisecond))
			return
		case <-time.After(time.Second):
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch neither sent the new value nor closed within 30s of reads after the restart")
		}
	}
}
