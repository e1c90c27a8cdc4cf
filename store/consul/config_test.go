package consul

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestConfigValidation(t *testing.T) {
	storetest.RejectsConfigs(t, Open, func(err error, _ string) bool { return errors.Is(err, ErrInvalidConfig) }, []storetest.InvalidConfig[Config]{
		{Name: "no endpoint", Config: Config{}},
		{Name: "two endpoints", Config: Config{Endpoints: []string{"127.0.0.1:8500", "127.0.0.1:8501"}}},
		{Name: "no port", Config: Config{Endpoints: []string{"127.0.0.1"}}},
		{Name: "URL", Config: Config{Endpoints: []string{"http://127.0.0.1:8500"}}},
		{Name: "bad port", Config: Config{Endpoints: []string{"127.0.0.1:http"}}},
		{Name: "no host", Config: Config{Endpoints: []string{":8500"}}},
		{Name: "negative dial timeout", Config: Config{Endpoints: []string{"127.0.0.1:8500"}, DialTimeout: -time.Second}},
		{Name: "negative request timeout", Config: Config{Endpoints: []string{"127.0.0.1:8500"}, RequestTimeout: -time.Second}},
	})
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
