package zookeeper

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership/store/internal/guard"
	"github.com/leadership-go/leadership/store/internal/storetest"
)

// A server restarted without its data refuses to resume a session that
// has seen transactions it does not have, every time: the store must open
// a new session by itself, and its watches must go on.
func TestServerRestartedEmpty(t *testing.T) {
	eps := servers(t, envSingle)
	if !storetest.RestartAllowed() {
		t.Skip("LEADERSHIP_RESTART_SERVERS is not 1: this test wipes the shared zookeeper server")
	}
	s := openOn(t, eps)
	raw := guard.Unwrap(s).(*kv)
	key := freshKey("restart/empty")
	ctx := storetest.Context(t, 2*time.Minute)

	// Transactions the session has seen and the wiped server will not have.
	for i := range 5 {
		if err := s.Put(ctx, key, []byte{byte('a' + i)}, nil); err != nil {
			t.Fatalf("Put: %v", err)
		}
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	events, err := s.Watch(wctx, key, nil)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if p := <-events; p == nil || string(p.Value) != "e" {
		t.Fatalf("first watch event %+v, want value e", p)
	}

	storetest.ServersScript(t, "restart", "--wipe", "zookeeper")
	restarted := time.Now()

	// The key is gone with the data; writes work again once the store has
	// a new session.
	var pair *store.KVPair
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, pair, err = s.AtomicPut(cctx, key, []byte("after"), nil, nil)
		cancel()
		if err == nil || errors.Is(err, store.ErrKeyExists) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write succeeds a minute after the server restarted empty: %v (clients replaced: %d)", err, raw.replacements())
		}
	}
	t.Logf("writing again %v after the restart; clients replaced: %d", time.Since(restarted).Round(time.Millisecond), raw.replacements())
	if raw.replacements() == 0 {
		t.Fatal("the store wrote again without a new client: was the server really wiped?")
	}
	if pair == nil {
		t.Fatal("the key survived the wipe")
	}

	// The watch followed the store to its new session: it reports the key
	// as it is now.
	deadline := time.After(time.Minute)
	for {
		select {
		case p, ok := <-events:
			if !ok {
				t.Fatal("the watch closed when the store replaced its session")
			}
			t.Logf("watch: %+v", p)
			if string(p.Value) == "after" {
				return
			}
		case <-deadline:
			t.Fatal("the watch did not report the write made on the new session")
		}
	}
}
