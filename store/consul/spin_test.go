package consul

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// An agent whose blocking queries fail at once while plain reads work (a
// proxy that refuses long polls) does not make the hub alternate the two
// for ever: the failures add up, and after watchRetryFor the watch ends,
// for its caller to open again. It used to stay open, two queries every
// 50 ms, without end.
func TestHubEndsWatchWhenOnlyPlainReadsWork(t *testing.T) {
	var blocking, plain atomic.Int64
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/status/leader":
			fmt.Fprint(w, `"127.0.0.1:8300"`)
		case strings.HasPrefix(r.URL.Path, "/v1/kv/"):
			if idx := r.URL.Query().Get("index"); idx != "" && idx != "0" {
				blocking.Add(1)
				http.Error(w, "rate limit exceeded", http.StatusTooManyRequests)
				return
			}
			plain.Add(1)
			w.Header().Set("X-Consul-Index", "100")
			w.Header().Set("X-Consul-KnownLeader", "true")
			w.Header().Set("Content-Type", "application/json")
			key := strings.TrimPrefix(r.URL.Path, "/v1/kv/")
			fmt.Fprintf(w, `[{"Key":%q,"CreateIndex":100,"ModifyIndex":100,"LockIndex":0,"Flags":0,"Value":%q}]`,
				key, base64.StdEncoding.EncodeToString([]byte("v")))
		case r.URL.Path == "/v1/txn":
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"Results":null,"Errors":[{"OpIndex":0,"What":"unknown KV operation"}]}`)
		default:
			fmt.Fprint(w, `{}`)
		}
	}))
	defer agent.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, Config{Endpoints: []string{strings.TrimPrefix(agent.URL, "http://")}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	events, err := s.Watch(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case _, ok := <-events:
			if !ok {
				t.Logf("the watch ended after %d failed blocking and %d plain queries", blocking.Load(), plain.Load())
				return
			}
		case <-ctx.Done():
			t.Fatalf("the watch stayed open for a minute: %d failed blocking and %d plain queries", blocking.Load(), plain.Load())
		}
	}
}
