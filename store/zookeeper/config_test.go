package zookeeper

import (
	"errors"
	"testing"
	"time"

	"github.com/leadership-go/leadership/store/internal/storetest"
)

func TestConfigValidation(t *testing.T) {
	storetest.RejectsConfigs(t, Open, func(err error, _ string) bool { return errors.Is(err, ErrInvalidConfig) }, []storetest.InvalidConfig[Config]{
		{Name: "no endpoint", Config: Config{}},
		{Name: "no port", Config: Config{Endpoints: []string{"127.0.0.1"}}},
		{Name: "bad port", Config: Config{Endpoints: []string{"127.0.0.1:x"}}},
		{Name: "port 0", Config: Config{Endpoints: []string{"127.0.0.1:0"}}},
		{Name: "no host", Config: Config{Endpoints: []string{":2181"}}},
		{Name: "one bad of two", Config: Config{Endpoints: []string{"127.0.0.1:2181", "h"}}},
		{Name: "password without user", Config: Config{Endpoints: []string{"127.0.0.1:2181"}, Password: "p"}},
		{Name: "negative session timeout", Config: Config{Endpoints: []string{"127.0.0.1:2181"}, SessionTimeout: -1}},
		{Name: "tiny session timeout", Config: Config{Endpoints: []string{"127.0.0.1:2181"}, SessionTimeout: time.Microsecond}},
		{Name: "negative dial timeout", Config: Config{Endpoints: []string{"127.0.0.1:2181"}, DialTimeout: -time.Second}},
		{Name: "negative request timeout", Config: Config{Endpoints: []string{"127.0.0.1:2181"}, RequestTimeout: -time.Second}},
	})
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
