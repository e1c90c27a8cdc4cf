package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/leadership-go/leadership"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testProxy forwards to the leader current names, or answers 503: the
// least a Proxy does, so that the demo is tested without the command.
type testProxy struct {
	current   func() leadership.Status
	transport *http.Transport
}

func newTestProxy(current func() leadership.Status) Proxy {
	return &testProxy{current: current, transport: &http.Transport{}}
}

func (p *testProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	leader := p.current().Leader
	if leader == "" {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "no leader", http.StatusServiceUnavailable)
		return
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: leader})
	rp.Transport = p.transport
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ServeHTTP(w, r)
}

func (p *testProxy) Close() { p.transport.CloseIdleConnections() }

// TestRun runs the whole demo with a short TTL through a minimal proxy.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	cfg := Config{Candidates: 2, TTL: 300 * time.Millisecond, Key: "demo-test/leader", NewProxy: newTestProxy}
	if err := Run(context.Background(), cfg, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"Phase 1: ", "Phase 2: ", "Phase 3: ", "Phase 4: ",
		"at most one leader at any instant: OK", "Summary (2 candidates, TTL 300ms)", "=> requests follow the leader: OK"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRunCancelled checks that a cancelled run says what it was waiting
// for when it was cancelled (whichever step that was) and stops everything
// it started (goleak checks that).
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := Config{Candidates: 2, TTL: time.Second, Key: "demo-test/cancelled", NewProxy: newTestProxy}
	err := Run(ctx, cfg, io.Discard)
	var me *MissingEventError
	if !errors.As(err, &me) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want a *MissingEventError wrapping context.Canceled", err)
	}
	if !strings.HasPrefix(err.Error(), "missing: ") {
		t.Errorf("message %q does not say what was missing", err)
	}
}

// TestValidate checks that each bad setting is named.
func TestValidate(t *testing.T) {
	good := Config{Candidates: DefaultCandidates, TTL: DefaultTTL, Key: DefaultKey, NewProxy: newTestProxy}
	if err := good.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Candidates = 1 }, "candidates 1: must be between 2 and 50"},
		{func(c *Config) { c.Candidates = 51 }, "candidates 51"},
		{func(c *Config) { c.TTL = 0 }, "ttl 0s"},
		{func(c *Config) { c.TTL = 2 * time.Minute }, "ttl 2m: must be between 100ms and 1m"},
		{func(c *Config) { c.Key = "/" }, `key "/": must name a key`},
		{func(c *Config) { c.NewProxy = nil }, "proxy"},
	} {
		c := good
		tc.change(&c)
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want a *ConfigError starting %q", err, tc.want)
		}
		if err := Run(context.Background(), c, io.Discard); !errors.As(err, &ce) {
			t.Errorf("Run with %q: %v", tc.want, err)
		}
	}
}

// TestRecorderWaitFor checks that waitFor finds past and future events and
// gives up when its context ends.
func TestRecorderWaitFor(t *testing.T) {
	r := newRecorder()
	r.add(event{kind: evNote, text: "first"})
	e, i, err := r.waitFor(context.Background(), 0, func(e event) bool { return e.text == "first" })
	if err != nil || i != 0 || e.text != "first" {
		t.Fatalf("past event: %v %d %v", e, i, err)
	}
	later, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	done, from := make(chan error, 1), r.mark()
	go func() {
		_, i, err := r.waitFor(later, from, func(e event) bool { return e.text == "later" })
		switch {
		case err != nil:
			err = fmt.Errorf("waitFor did not see a later event: %w", err)
		case i != 2:
			err = errors.New("wrong index")
		}
		done <- err
	}()
	r.add(event{kind: evNote, text: "other"})
	r.add(event{kind: evNote, text: "later"})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := r.waitFor(ctx, r.mark(), func(event) bool { return true }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	if got := len(r.between(1, -1)); got != 2 {
		t.Errorf("between(1, -1) has %d events, want 2", got)
	}
}

// TestFormats checks the duration formats the narration uses.
func TestFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Minute: "1m", 90 * time.Second: "1m30s", time.Hour: "1h", 300 * time.Millisecond: "300ms"} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
	}
	if got := ms(1500 * time.Microsecond); got != "1.5ms" {
		t.Errorf("ms(1.5ms) = %q", got)
	}
	if got := ms(250 * time.Microsecond); got != "0.250ms" {
		t.Errorf("ms(250µs) = %q", got)
	}
}
