package health_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leadership-go/leadership"
	"github.com/leadership-go/leadership/health"
	"github.com/leadership-go/leadership/store/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func get(t *testing.T, h http.Handler) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestHandlerServesTheCheck(t *testing.T) {
	var err error
	h := health.Handler(func() error { return err })
	if code, body := get(t, h); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("healthy: %d %q", code, body)
	}
	err = fmt.Errorf("%w: stuck", leadership.ErrUnhealthy)
	if code, body := get(t, h); code != http.StatusServiceUnavailable || !strings.Contains(body, "stuck") {
		t.Fatalf("unhealthy: %d %q", code, body)
	}
}

// A candidate's probe: 503 before the start, 200 while it runs, 503 once
// it has stopped.
func ExampleHandler() {
	ctx := context.Background()
	kv, err := memory.Open(ctx, memory.Config{Name: "example-health"})
	if err != nil {
		panic(err)
	}
	defer kv.Close()
	c := leadership.NewCandidate(kv, "jobs/report", "ada", 15*time.Second)
	probe := httptest.NewServer(health.Handler(func() error { return c.Health(30 * time.Second) }))
	defer probe.Close()
	status := func() {
		resp, err := http.Get(probe.URL)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s", resp.StatusCode, body)
	}

	status()
	electedCh, _, err := c.RunForElection()
	if err != nil {
		panic(err)
	}
	for isElected := range electedCh { // false first, then true once elected
		if isElected {
			break
		}
	}
	status()
	c.Stop()
	status()
	probe.CloseClientConnections()
	// Output:
	// 503 leadership: unhealthy: not started
	// 200 ok
	// 503 leadership: unhealthy: stopped
}
