package adapter

import (
	"testing"
	"time"
)

func TestEndpoint(t *testing.T) {
	for ep, ok := range map[string]bool{
		"127.0.0.1:2379":   true,
		"[::1]:2379":       true,
		"db.local:1":       true,
		"http://h:2379":    false,
		"h":                false,
		":2379":            false,
		"h:0":              false,
		"h:65536":          false,
		"h:port":           false,
		"127.0.0.1:2379:1": false,
	} {
		if err := Endpoint(ep); (err == nil) != ok {
			t.Errorf("Endpoint(%q) = %v", ep, err)
		}
	}
}

func TestTimeouts(t *testing.T) {
	dial, req := time.Duration(0), 3*time.Second
	if f, r := Timeouts(Timeout{"Dial", &dial, time.Second}, Timeout{"Request", &req, time.Minute}); f != "" {
		t.Fatalf("refused %s: %s", f, r)
	}
	if dial != time.Second || req != 3*time.Second {
		t.Fatalf("dial %v, request %v", dial, req)
	}
	neg := -time.Second
	if f, r := Timeouts(Timeout{"Dial", &dial, 0}, Timeout{"Request", &neg, 0}); f != "Request" || r == "" {
		t.Fatalf("negative: field %q, reason %q", f, r)
	}
}
