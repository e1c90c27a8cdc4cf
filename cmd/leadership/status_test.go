package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"
	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/internal/memfault"
)

// statusTTL is the lease of the candidates the status tests start: short,
// so that status sees a renewal (every third of it) or gives up quickly.
const statusTTL = 600 * time.Millisecond

// statusJSONOf runs status --json and decodes its one object, failing on
// anything else; it returns the exit code, the object and its members.
func statusJSONOf(t *testing.T, storeURL, key string) (int, statusJSON, map[string]any, string) {
	t.Helper()
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", key, "--json")
	var o statusJSON
	var members map[string]any
	if err := json.Unmarshal([]byte(out), &o); err != nil || strings.Count(out, "\n") != 1 {
		t.Fatalf("status --json: exit %d, stdout %q (%v), stderr %q", code, out, err, errOut)
	}
	_ = json.Unmarshal([]byte(out), &members)
	if _, err := time.Parse(time.RFC3339Nano, o.Time); err != nil {
		t.Errorf("status --json: time %q: %v", o.Time, err)
	}
	return code, o, members, errOut
}

// TestStatusNoLeader checks status on a key with no election (exit 3, at
// once) and after the leader released it (exit 3, the last term kept).
func TestStatusNoLeader(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "k")
	if code != exitNoLeader || errOut != "" || !strings.HasSuffix(out, " - 0\n") {
		t.Errorf("no election: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, o, members, _ := statusJSONOf(t, storeURL, "k")
	if code != exitNoLeader || o.Leader != "" || o.Term != 0 || len(members) != 3 {
		t.Errorf("no election, json: exit %d, %+v (%d members)", code, o, len(members))
	}
	c := startCandidate(t, storeName, "k", "node-1", statusTTL)
	leaderOf(t, []*testCandidate{c})
	c.c.Stop() // releases at once
	code, out, errOut = runCLI(t, "status", "--store", storeURL, "--key", "k")
	if code != exitNoLeader || errOut != "" || !strings.HasSuffix(out, " - 1\n") {
		t.Errorf("after release: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestStatusLiveLeader checks that a leader that renews its lease is
// reported, with exit 0, in both formats.
func TestStatusLiveLeader(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	c := startCandidate(t, storeName, "k", "node-1", statusTTL)
	leaderOf(t, []*testCandidate{c})
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "/k/") // the same election
	if code != exitOK || errOut != "" || !strings.HasSuffix(out, " node-1 1\n") {
		t.Errorf("leader: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, o, members, errOut := statusJSONOf(t, storeURL, "k")
	if code != exitOK || errOut != "" || o.Leader != "node-1" || o.Term != 1 || len(members) != 3 {
		t.Errorf("leader, json: exit %d, %+v (%d members), stderr %q", code, o, len(members), errOut)
	}
	if !c.c.IsLeader() {
		t.Errorf("node-1 no longer leads")
	}
}

// TestStatusCrashedLeader checks that a leader whose client vanished
// without releasing (its store handle cut off: it can no longer renew) is
// not reported: exit 5, "-" on stdout, and the holder named as unconfirmed.
func TestStatusCrashedLeader(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	c := startCandidate(t, storeName, "k", "node-1", statusTTL)
	leaderOf(t, []*testCandidate{c})
	memfault.Disconnect(c.h) // no write of node-1 reaches the store after this
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "k")
	if code != exitUnconfirmed || !strings.HasSuffix(out, " - 1\n") {
		t.Errorf("crashed leader: exit %d (want %d), stdout %q, stderr %q", code, exitUnconfirmed, out, errOut)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "leadership: status: node-1 (term 1) is unconfirmed") {
		t.Errorf("crashed leader: stderr %q", errOut)
	}
	code, o, _, _ := statusJSONOf(t, storeURL, "k")
	if code != exitUnconfirmed || o.Leader != "" || o.Unconfirmed != "node-1" || o.Term != 1 {
		t.Errorf("crashed leader, json: exit %d, %+v", code, o)
	}
}

// TestStatusRecordNeverRenewed checks a record written directly, with a
// holder that never renews it: status never names that holder as leader.
func TestStatusRecordNeverRenewed(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	h := openHandle(t, storeName)
	rec := `{"v":1,"leader":"ghost","id":"0123","term":7,"seq":3,"ttl_ms":300,"gen":0,"LastIndex":"0.7.3.x"}`
	if err := h.Put(t.Context(), "svc/leader", []byte(rec), nil); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "svc/leader")
	if code != exitUnconfirmed || !strings.HasSuffix(out, " - 7\n") || !strings.Contains(errOut, "ghost (term 7) is unconfirmed") {
		t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, exitUnconfirmed, out, errOut)
	}
}

// readSignal wraps the store status opens: reads is sent a value after
// each Get returns.
type readSignal struct {
	store.Store
	reads chan struct{}
}

func (r *readSignal) Get(ctx context.Context, key string, opts *store.ReadOptions) (*store.KVPair, error) {
	p, err := r.Store.Get(ctx, key, opts)
	select {
	case r.reads <- struct{}{}:
	default:
	}
	return p, err
}

// signalReads makes the stores the commands open signal every read on the
// returned channel (buffered: one pending signal).
func signalReads(t *testing.T) <-chan struct{} {
	t.Helper()
	reads := make(chan struct{}, 1)
	old := openStoreFunc
	openStoreFunc = func(ctx context.Context, url string) (store.Store, error) {
		kv, err := old(ctx, url)
		if err != nil {
			return nil, err
		}
		return &readSignal{Store: kv, reads: reads}, nil
	}
	t.Cleanup(func() { openStoreFunc = old })
	return reads
}

// TestStatusSeesTakeover checks that a write seen while status waits
// confirms the leader it names: a new term begun by another candidate
// after status found a holder that does not renew.
func TestStatusSeesTakeover(t *testing.T) {
	reads := signalReads(t)
	storeURL, storeName := memoryURL(t)
	h := openHandle(t, storeName)
	// A lease long enough that status is still waiting when the record is
	// replaced.
	rec := `{"v":1,"leader":"ghost","id":"0123","term":7,"seq":3,"ttl_ms":60000,"gen":0,"LastIndex":"0.7.3.x"}`
	if err := h.Put(t.Context(), "k", []byte(rec), nil); err != nil {
		t.Fatal(err)
	}
	p := startInProcess(t.Context(), t, "status", "--store", storeURL, "--key", "k")
	select {
	case <-reads: // status has read the ghost's record
	case <-time.After(30 * time.Second):
		t.Fatal("status did not read the election")
	}
	next := `{"v":1,"leader":"node-2","id":"4567","term":8,"seq":0,"ttl_ms":60000,"gen":0,"LastIndex":"0.8.0.y"}`
	if err := h.Put(t.Context(), "k", []byte(next), nil); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 30*time.Second); code != exitOK || !strings.HasSuffix(p.stdout.String(), " node-2 8\n") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, p.stdout.String(), p.stderr.String())
	}
}

// TestStatusEnded checks that an ended election exits with 4.
func TestStatusEnded(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	c := startCandidate(t, storeName, "k", "node-1", statusTTL)
	leaderOf(t, []*testCandidate{c})
	h := openHandle(t, storeName)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := leadership.EndElection(ctx, h, "k"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "k")
	if code != exitEnded || !strings.HasSuffix(out, " - 1\n") || !strings.Contains(errOut, `leadership: status: the election at key "k" was ended`) {
		t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, exitEnded, out, errOut)
	}
}

// TestStatusForeignValue checks that a value status cannot read is a
// runtime error, not "no leader".
func TestStatusForeignValue(t *testing.T) {
	storeURL, _ := foreignKey(t, "some other program's value")
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "k")
	if code != exitFailure || out != "" || !strings.Contains(errOut, "not an election record") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestStatusNoWait checks --no-wait (issue 26): the record as it is read,
// a live holder printed as unconfirmed with the renewals its record
// shows, without waiting for one; a free election as usual.
func TestStatusNoWait(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	c := startCandidate(t, storeName, "k", "node-1", time.Minute) // no renewal for 20s
	leaderOf(t, []*testCandidate{c})
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "k", "--no-wait")
	if code != exitUnconfirmed || !strings.HasSuffix(out, " - 1\n") ||
		!strings.Contains(errOut, "node-1 (term 1, TTL 1m0s) holds the record, unconfirmed: --no-wait") || !strings.Contains(errOut, "renewals") {
		t.Errorf("--no-wait: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "status", "--store", storeURL, "--key", "k", "--no-wait", "--json")
	var o statusJSON
	if err := json.Unmarshal([]byte(out), &o); err != nil || code != exitUnconfirmed || o.Unconfirmed != "node-1" || o.Renewals == nil || o.Since == "" || o.TTLms != 60000 {
		t.Errorf("--no-wait --json: exit %d, %q (%v), stderr %q", code, out, err, errOut)
	}
	c.c.Stop()
	code, out, errOut = runCLI(t, "status", "--store", storeURL, "--key", "k", "--no-wait")
	if code != exitNoLeader || errOut != "" || !strings.HasSuffix(out, " - 1\n") {
		t.Errorf("--no-wait after release: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestStatusNoWaitClientGoLease checks --no-wait on the record
// store/kubernetes makes of a client-go elector's Lease, whose seq is its
// renewTime in microseconds: no renewal count is shown, and an old
// acquireTime does not make its holder look crashed.
func TestStatusNoWaitClientGoLease(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	h := openHandle(t, storeName)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	rec := `{"v":1,"leader":"cg","id":"lease:cg","term":3,"seq":1795000000000000,"ttl_ms":16667,"gen":0,"since":"` + since + `","LastIndex":"lease.3.1795000000000000.42"}`
	if err := h.Put(t.Context(), "cg", []byte(rec), nil); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "cg", "--no-wait")
	if code != exitUnconfirmed || !strings.Contains(errOut, "cg (term 3, TTL 16.667s) holds the Lease, unconfirmed") || strings.Contains(errOut, "renewals") {
		t.Errorf("--no-wait: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "status", "--store", storeURL, "--key", "cg", "--no-wait", "--json")
	var o statusJSON
	if err := json.Unmarshal([]byte(out), &o); err != nil || code != exitUnconfirmed || o.Unconfirmed != "cg" || o.Renewals != nil {
		t.Errorf("--no-wait --json: exit %d, %q (%v), stderr %q", code, out, err, errOut)
	}
	if why := tooFewRenewals(&electionRecord{Leader: "cg", ID: "lease:cg", TTLms: 16667, Seq: 1, Since: since}, time.Now()); why != "" {
		t.Errorf("a client-go Lease acquired an hour ago: %q", why)
	}
}

// TestStatusCrashedLongAgo checks that a holder whose record shows fewer
// renewals than the TTLs since its term began is unconfirmed at once, for
// what its record shows, not after watching it for a TTL.
func TestStatusCrashedLongAgo(t *testing.T) {
	storeURL, storeName := memoryURL(t)
	h := openHandle(t, storeName)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	rec := `{"v":1,"leader":"ghost","id":"0123","term":7,"seq":3,"ttl_ms":60000,"gen":0,"since":"` + since + `","LastIndex":"0.7.3.x"}`
	if err := h.Put(t.Context(), "svc/leader", []byte(rec), nil); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "status", "--store", storeURL, "--key", "svc/leader")
	if code != exitUnconfirmed || !strings.HasSuffix(out, " - 7\n") || !strings.Contains(errOut, "ghost (term 7) is unconfirmed: its term began 1h0m0s ago") {
		t.Errorf("exit %d (want %d), stdout %q, stderr %q", code, exitUnconfirmed, out, errOut)
	}
	// A term as long with as many renewals as TTLs is watched as usual.
	if why := tooFewRenewals(&electionRecord{Leader: "a", ID: "1", TTLms: 60000, Seq: 60, Since: since}, time.Now()); why != "" {
		t.Errorf("a holder that renewed once a minute for an hour: %q", why)
	}
}
