package all_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership"
)

// TestSecurePostgresForgedNotification: a notification is only a hint. A
// role that may only connect (leadership-other) and the read-only follower
// role (leadership-reader) each send, on the table's channel, a put event
// carrying a record that names "mallory" with a later term. No row is
// written: the follower's store must not deliver it, the follower must not
// name mallory, and the leader must not step down. The check is ordered, not
// timed: after the forgeries the leader proclaims a value, and everything
// delivered before that real write is examined.
func TestSecurePostgresForgedNotification(t *testing.T) {
	const ttl = 4 * time.Second
	writer, reader, other := securedServer{name: "postgres", env: "LEADERSHIP_POSTGRES_SECURE"}.urls(t)
	if reader == "" || other == "" {
		t.Fatal("LEADERSHIP_POSTGRES_SECURE_READER or _OTHER is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience(ttl))
	defer cancel()

	key := freshKey(t)
	c := leadership.NewCandidate(openURL(t, writer), key, "writer", ttl)
	elected, errs, err := c.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	awaitElected(t, elected, errs, ttl)

	f := leadership.NewFollower(openURL(t, reader), key)
	leaders, ferrs, err := f.FollowElection()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	for named := false; !named; {
		select {
		case l := <-leaders:
			named = l == "writer"
		case err := <-ferrs:
			t.Logf("follower: %v", err)
		case <-ctx.Done():
			t.Fatal("the follower never named the leader")
		}
	}

	// A raw watch of the record, as the follower's store sees it.
	readerKV := openURL(t, reader)
	events, err := readerKV.Watch(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cur *store.KVPair
	select {
	case cur = <-events:
	case <-ctx.Done():
		t.Fatal("no first event")
	}
	if cur == nil || cur.Value == nil {
		t.Fatalf("first event %+v, want the record", cur)
	}

	// The forged record: mallory, a later term.
	var rec map[string]any
	if err := json.Unmarshal(cur.Value, &rec); err != nil {
		t.Fatal(err)
	}
	term, _ := rec["term"].(float64)
	rec["leader"], rec["id"], rec["term"], rec["seq"] = "mallory", "mallory-id", term+1, 0
	rec["LastIndex"] = "forged"
	forged, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	payload := fmt.Sprintf("P:%d:%d:::%s:%s", cur.LastIndex+1000, uint64(1)<<60, base64.StdEncoding.EncodeToString(forged), key)

	for _, role := range []struct{ name, url string }{{"CONNECT-only role", other}, {"read-only role", reader}} {
		conn, err := pgx.Connect(ctx, role.url)
		if err != nil {
			t.Fatalf("%s: connect: %v", role.name, err)
		}
		if _, err := conn.Exec(ctx, "SELECT pg_notify('leadership_kv_events', $1)", payload); err != nil {
			t.Fatalf("%s: pg_notify: %v", role.name, err)
		}
		t.Logf("%s sent a forged notification", role.name)
		_ = conn.Close(ctx)
	}

	// A real write after the forgeries: everything before it is examined.
	if err := c.Proclaim(ctx, "after-forgery"); err != nil {
		t.Fatalf("Proclaim: %v", err)
	}
	for done := false; !done; {
		select {
		case p, ok := <-events:
			if !ok {
				t.Fatal("the watch closed")
			}
			if p.Value != nil && strings.Contains(string(p.Value), "mallory") {
				t.Errorf("the store delivered the forged record: %s", p.Value)
			}
			done = p.Value != nil && strings.Contains(string(p.Value), "after-forgery")
		case <-ctx.Done():
			t.Fatal("the real write never arrived")
		}
	}

	// The follower sees the proclaimed value, then has seen whatever the
	// forgery made it see; the leader still leads.
	for seen := false; !seen; {
		select {
		case o := <-f.Status():
			seen = o.Value == "after-forgery"
		case <-ctx.Done():
			t.Fatal("the follower never saw the proclaimed value")
		}
	}
	for drained := false; !drained; {
		select {
		case l := <-leaders:
			if l != "writer" {
				t.Errorf("the follower named %q", l)
			}
		case e := <-elected:
			if !e {
				t.Error("the leader stepped down")
			}
		default:
			drained = true
		}
	}
	if f.Leader() != "writer" {
		t.Errorf("the follower names %q", f.Leader())
	}
	if !c.IsLeader() {
		t.Error("the leader no longer leads")
	}
}
