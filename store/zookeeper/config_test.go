package zookeeper

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no endpoint", Config{}},
		{"no port", Config{Endpoints: []string{"127.0.0.1"}}},
		{"bad port", Config{Endpoints: []string{"127.0.0.1:x"}}},
		{"port 0", Config{Endpoints: []string{"127.0.0.1:0"}}},
		{"no host", Config{Endpoints: []string{":2181"}}},
		{"one bad of two", Config{Endpoints: []string{"127.0.0.1:2181", "h"}}},
		{"password without user", Config{Endpoints: []string{"127.0.0.1:2181"}, Password: "p"}},
		{"negative session timeout", Config{Endpoints: []string{"127.0.0.1:2181"}, SessionTimeout: -1}},
		{"tiny session timeout", Config{Endpoints: []string{"127.0.0.1:2181"}, SessionTimeout: time.Microsecond}},
		{"negative dial timeout", Config{Endpoints: []string{"127.0.0.1:2181"}, DialTimeout: -time.Second}},
		{"negative request timeout", Config{Endpoints: []string{"127.0.0.1:2181"}, RequestTimeout: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(context.Background(), tc.cfg)
			if !errors.Is(err, ErrInvalidConfig) {
				if s != nil {
					_ = s.Close()
				}
				t.Fatalf("Open(%+v) = %v, want ErrInvalidConfig", tc.cfg, err)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	st, err := Config{Endpoints: []string{"zk1:2181", "zk2:2181"}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if st.sessionTimeout != DefaultSessionTimeout || st.dialTimeout != DefaultDialTimeout || st.requestTimeout != DefaultRequestTimeout {
		t.Fatalf("defaults not applied: %+v", st)
	}
	if Scheme != "zk" {
		t.Fatalf("Scheme = %q", Scheme)
	}
}
