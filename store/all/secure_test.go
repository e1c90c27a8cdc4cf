package all_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kvtools/valkeyrie/store"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/leadershiptest"
	"github.com/leadership-go/leadership/store/open"
)

// The secured suite runs against the secured servers of scripts/servers.sh
// (start all, or start secure; see scripts/secure/). Each backend's file
// (secure_BACKEND_test.go) describes its server with a securedServer and
// calls runSecured. The environment (scripts/servers.sh env) gives, for a
// backend whose variable is V:
//
//	V         the candidate's URL: TLS, client certificate and credentials
//	          of a least-privilege identity, with rights on the election
//	          prefix "leadershiptest/" and "secure/" only
//	V_READER  a follower's URL: an identity that may only read them
//	V_OTHER   an identity of the same store with no rights on them
//
// and LEADERSHIP_CERTS the directory of the certificates mkcerts wrote
// (ca.crt, other-ca.crt, other-client.*, expired-client.*, ...).

// securedServer is one secured test server.
type securedServer struct {
	name string        // "etcd"
	env  string        // "LEADERSHIP_ETCD_SECURE"
	ttl  time.Duration // the candidates' lease
	// bad are the broken configurations: each must fail to open, or fail
	// its first call, with one error naming what is wrong.
	bad func(t *testing.T, certs string) []badConfig
}

// badConfig is a store URL that must be refused, with what the error says.
type badConfig struct {
	name   string // "unknown CA"
	url    string
	want   []string // each must be in the error (case-insensitive); one of them for alternatives joined by "|"
	secret string   // must not be in the error (a password), or ""
	// kind is the shared vocabulary's sentinel (store.ErrAuth, ...) the
	// error must match, or nil.
	kind error
	// write: when the configuration opens and reads, its first write (a
	// candidate's creation of its record) must be refused instead. For
	// backends whose server cannot tell at connection time (ZooKeeper's
	// digest scheme accepts any password: the identity is the digest of
	// user and password, and has no rights).
	write bool
}

// urls returns the candidate's, the reader's and the other identity's URLs,
// skipping the test when the server is not running.
func (s securedServer) urls(t *testing.T) (writer, reader, other string) {
	t.Helper()
	writer = os.Getenv(s.env)
	if writer == "" {
		t.Skipf("%s is not set: start the secured server (scripts/servers.sh start %s-secure; eval \"$(scripts/servers.sh env)\")", s.env, s.name)
	}
	return patient(writer), patient(os.Getenv(s.env + "_READER")), patient(os.Getenv(s.env + "_OTHER"))
}

// patient gives url a connect timeout of 20s unless it has one: a TLS
// handshake with a client certificate (and SCRAM) under -race on a loaded
// machine can take longer than the default 5s. PostgreSQL's is its DSN's
// connect_timeout (in seconds); the other schemes take dial_timeout.
func patient(url string) string {
	if url == "" || strings.Contains(url, "dial_timeout=") || strings.Contains(url, "connect_timeout=") {
		return url
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	if strings.HasPrefix(url, "postgres") {
		return url + sep + "connect_timeout=20"
	}
	return url + sep + "dial_timeout=20s"
}

// runSecured runs every secured check on s.
func runSecured(t *testing.T, s securedServer) {
	writer, reader, other := s.urls(t)
	t.Run("Conformance", func(t *testing.T) {
		leadershiptest.Run(t, urlBackend{name: s.name + "-secure", url: writer, ttl: s.ttl})
	})
	t.Run("FromEnv", func(t *testing.T) { electedFromEnv(t, writer, s.ttl) })
	t.Run("ReadOnlyFollower", func(t *testing.T) {
		if reader == "" {
			t.Fatalf("%s_READER is not set", s.env)
		}
		readOnlyFollower(t, writer, reader, s.ttl)
	})
	t.Run("RecordProtected", func(t *testing.T) {
		if other == "" {
			t.Fatalf("%s_OTHER is not set", s.env)
		}
		recordProtected(t, writer, other, s.ttl)
	})
	t.Run("BadConfigs", func(t *testing.T) {
		certs := os.Getenv("LEADERSHIP_CERTS")
		if certs == "" {
			t.Fatal("LEADERSHIP_CERTS is not set (scripts/servers.sh env)")
		}
		for _, bc := range s.bad(t, certs) {
			t.Run(bc.name, func(t *testing.T) { refused(t, bc) })
		}
	})
}

// urlBackend gives the conformance suite clients opened from a URL, as a
// user would, each through its own TCP forwarder (for Cut and Vanish).
type urlBackend struct {
	name, url string
	ttl       time.Duration
}

func (b urlBackend) Name() string       { return b.name }
func (b urlBackend) TTL() time.Duration { return b.ttl }

func (b urlBackend) Client(t *testing.T) *leadershiptest.Client {
	spec, err := open.Parse(b.url)
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := leadershiptest.NewForwarder(spec.Endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fwd.Close() })
	kv := openURL(t, strings.Replace(b.url, spec.Endpoints[0], fwd.Addr(), 1))
	return &leadershiptest.Client{Store: kv, Cut: fwd.Cut, Heal: fwd.Heal, Vanish: func() { fwd.Kill(); _ = kv.Close() }}
}

// openURL opens url (closed at the end of the test).
func openURL(t *testing.T, url string) store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := open.Store(ctx, url)
	if err != nil {
		t.Fatalf("open %s: %v", redact(url), err)
	}
	t.Cleanup(func() { _ = kv.Close() })
	return kv
}

// patience bounds every wait of the secured checks.
func patience(ttl time.Duration) time.Duration { return 10*ttl + 20*time.Second }

// freshKey is an election key under the prefix the identities have
// rights on.
func freshKey(t *testing.T) string {
	return "secure/" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name()) + "-" + time.Now().Format("150405.000000000")
}

// awaitElected waits until c reports elected.
func awaitElected(t *testing.T, elected <-chan bool, errs <-chan error, ttl time.Duration) {
	t.Helper()
	deadline := time.After(patience(ttl))
	for {
		select {
		case e, ok := <-elected:
			if !ok {
				t.Fatal("elected channel closed before election")
			}
			if e {
				return
			}
		case err := <-errs:
			t.Logf("store error while campaigning: %v", err)
		case <-deadline:
			t.Fatalf("not elected within %v", patience(ttl))
		}
	}
}

// electedFromEnv: a candidate whose store comes from $LEADERSHIP_STORE.
func electedFromEnv(t *testing.T, url string, ttl time.Duration) {
	t.Setenv(open.EnvVar, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := open.FromEnv(ctx, "")
	if err != nil {
		t.Fatalf("FromEnv: %v", err)
	}
	defer kv.Close()
	c := leadership.NewCandidate(kv, freshKey(t), "from-env", ttl)
	elected, errs, err := c.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	awaitElected(t, elected, errs, ttl)
}

// readOnlyFollower: a follower with read rights only names the leader; a
// candidate with those rights is refused and never leads.
func readOnlyFollower(t *testing.T, writer, reader string, ttl time.Duration) {
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
		t.Fatalf("a read-only follower could not follow: %v", err)
	}
	defer f.Stop()
	deadline := time.After(patience(ttl))
	for named := false; !named; {
		select {
		case l := <-leaders:
			named = l == "writer"
		case err := <-ferrs:
			t.Errorf("read-only follower: store error %v", err)
		case <-deadline:
			t.Fatal("the read-only follower never named the leader")
		}
	}

	// A candidate with read rights only: its writes are refused.
	key2 := freshKey(t) + "-reader"
	rc := leadership.NewCandidate(openURL(t, reader), key2, "reader", ttl)
	relected, rerrs, err := rc.RunForElection()
	if err != nil {
		t.Logf("read-only candidate refused at start: %v", err)
		return
	}
	defer rc.Stop()
	// Wait for its refusal: a "not elected" report before it is no error.
	deadline = time.After(patience(ttl))
	for {
		select {
		case err := <-rerrs:
			t.Logf("read-only candidate: %v", err)
			return
		case e := <-relected:
			if e {
				t.Fatal("a read-only identity was elected")
			}
		case <-deadline:
			t.Fatal("a read-only candidate reported no error")
		}
	}
}

// recordProtected: an identity without rights on the election prefix can
// neither overwrite nor delete the record.
func recordProtected(t *testing.T, writer, other string, ttl time.Duration) {
	key := freshKey(t)
	kv := openURL(t, writer)
	c := leadership.NewCandidate(kv, key, "owner", ttl)
	elected, errs, err := c.RunForElection()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	awaitElected(t, elected, errs, ttl)
	ctx, cancel := context.WithTimeout(context.Background(), patience(ttl))
	defer cancel()
	before, err := kv.Get(ctx, key, &store.ReadOptions{Consistent: true})
	if err != nil {
		t.Fatal(err)
	}
	intruder := openURL(t, other)
	if err := intruder.Put(ctx, key, []byte(`{"forged":true}`), nil); err == nil {
		t.Error("an identity without rights overwrote the election record")
	} else {
		t.Logf("Put refused: %v", err)
	}
	if ok, _, err := intruder.AtomicPut(ctx, key, []byte(`{"forged":true}`), before, nil); ok || err == nil {
		t.Errorf("AtomicPut by an identity without rights: ok %v, err %v", ok, err)
	}
	if err := intruder.Delete(ctx, key); err == nil {
		after, gerr := kv.Get(ctx, key, nil)
		if gerr != nil || after == nil {
			t.Error("an identity without rights deleted the election record")
		}
	}
	after, err := kv.Get(ctx, key, &store.ReadOptions{Consistent: true})
	if err != nil {
		t.Fatal(err)
	}
	if string(after.Value) == `{"forged":true}` {
		t.Error("the record holds the intruder's value")
	}
}

// refused: bc.url fails to open, or its first read fails, with one error
// naming the problem and never the secret.
func refused(t *testing.T, bc badConfig) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	kv, err := open.Store(ctx, bc.url)
	if err == nil {
		_, err = kv.Get(ctx, "secure/probe", nil)
		if errors.Is(err, store.ErrKeyNotFound) {
			err = nil
		}
		if err == nil && bc.write {
			_, _, err = kv.AtomicPut(ctx, freshKey(t), []byte("probe"), nil, nil)
		}
		_ = kv.Close()
	}
	if err == nil {
		t.Fatalf("%s: opened and read (and wrote, if write is set)", redact(bc.url))
	}
	if bc.kind != nil && !errors.Is(err, bc.kind) {
		t.Errorf("error %q does not match %v", err, bc.kind)
	}
	msg := strings.ToLower(err.Error())
	for _, w := range bc.want {
		found := false
		for _, alt := range strings.Split(w, "|") {
			found = found || strings.Contains(msg, strings.ToLower(alt))
		}
		if !found {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if bc.secret != "" && strings.Contains(err.Error(), bc.secret) {
		t.Errorf("error %q shows the secret", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q takes more than one line", err)
	}
	t.Logf("refused in %v: %v", time.Since(start).Round(time.Millisecond), err)
}

// redact is url with its secrets masked, for messages.
func redact(url string) string {
	if s, err := open.Parse(url); err == nil {
		return s.String()
	}
	return "(malformed URL)"
}

// withParams is the store URL raw with its query parameters changed: set
// adds or replaces, an empty value removes.
func withParams(t *testing.T, raw string, set map[string]string) string {
	t.Helper()
	base, query, _ := strings.Cut(raw, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	if len(q) == 0 {
		return base
	}
	return base + "?" + q.Encode()
}
