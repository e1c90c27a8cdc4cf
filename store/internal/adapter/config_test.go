package adapter

import (
	"errors"
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

func TestCheckNetwork(t *testing.T) {
	invalid := errors.New("x: invalid configuration")
	eps := []string{"a:1", "b:2"}
	given, dial, req := eps, time.Duration(0), time.Second
	if err := CheckNetwork(invalid, &eps, 0, "", &dial, &req); err != nil {
		t.Fatal(err)
	}
	if eps[0] = "c:3"; given[0] != "a:1" {
		t.Fatal("the endpoints were not copied")
	}
	if dial != DefaultDialTimeout || req != time.Second {
		t.Fatalf("dial %v, request %v", dial, req)
	}
	neg := -time.Second
	for name, err := range map[string]error{
		"too many": CheckNetwork(invalid, &eps, 1, "one only", &dial, &req),
		"negative": CheckNetwork(invalid, &eps, 0, "", &dial, &neg),
	} {
		if !errors.Is(err, invalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
