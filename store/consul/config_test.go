package consul

import (
	"context"
	"crypto/tls"
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
		{"two endpoints", Config{Endpoints: []string{"127.0.0.1:8500", "127.0.0.1:8501"}}},
		{"no port", Config{Endpoints: []string{"127.0.0.1"}}},
		{"URL", Config{Endpoints: []string{"http://127.0.0.1:8500"}}},
		{"bad port", Config{Endpoints: []string{"127.0.0.1:http"}}},
		{"no host", Config{Endpoints: []string{":8500"}}},
		{"negative dial timeout", Config{Endpoints: []string{"127.0.0.1:8500"}, DialTimeout: -time.Second}},
		{"negative request timeout", Config{Endpoints: []string{"127.0.0.1:8500"}, RequestTimeout: -time.Second}},
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
	st, err := Config{Endpoints: []string{"consul:8500"}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if st.dialTimeout != DefaultDialTimeout || st.requestTimeout != DefaultRequestTimeout || st.scheme != "http" {
		t.Fatalf("defaults not applied: %+v", st)
	}
	cfg := &tls.Config{ServerName: "consul"}
	st, err = Config{Endpoints: []string{"consul:8501"}, TLS: cfg}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if st.scheme != "https" || st.tls == cfg || st.tls.ServerName != "consul" {
		t.Fatalf("TLS: scheme %q, config %p (given %p)", st.scheme, st.tls, cfg)
	}
	if Scheme != "consul" {
		t.Fatalf("Scheme = %q", Scheme)
	}
}
