package consul

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

// A watch whose shared query had seen a high index, on an agent that then
// restarts without its data: a blocking query waiting for that index on
// the new agent would hang for watchWait (30s), the watch silent while the
// key changes. After the failed query the hub asks without blocking, sees
// the index gone back, and ends the watch (the caller watches again) or
// sends the new value: well within watchWait.
func TestWatchAfterAgentRestartedEmpty(t *testing.T) {
	addr := agent(t)
	if !storetest.RestartAllowed() {
		t.Skip("LEADERSHIP_RESTART_SERVERS is not 1: this test wipes the shared Consul agent")
	}
	s := openOn(t, addr)
	key := freshKey("restart/empty")
	ctx := storetest.Context(t, 2*time.Minute)

	// Indexes the wiped agent will not reach during the test.
	for i := range 300 {
		if err := s.Put(ctx, fmt.Sprintf("%s-fill/%d", key, i), []byte("x"), nil); err != nil {
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
	// The hub's query now waits on the key's index.
	time.Sleep(500 * time.Millisecond)

	storetest.ServersScript(t, "restart", "--wipe", "consul")
	restarted := time.Now()

	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		err = s.Put(cctx, key, []byte("after"), nil)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write succeeds a minute after the agent restarted empty: %v", err)
		}
	}
	bound := watchWait / 2
	for deadline := time.Now().Add(bound); ; {
		select {
		case p, ok := <-events:
			if ok && (p == nil || string(p.Value) != "after") {
				t.Fatalf("watch event %+v after the restart, want value after", p)
			}
			t.Logf("the watch %s %v after the restart", map[bool]string{true: "sent the new value", false: "closed"}[ok], time.Since(restarted).Round(time.Millisecond))
			return
		case <-time.After(time.Second):
		}
		if _, err := s.Get(ctx, key, nil); err != nil && !errors.Is(err, store.ErrNotReachable) {
			t.Fatalf("Get: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watch neither sent the new value nor closed within %v after the restart", bound)
		}
	}
}
