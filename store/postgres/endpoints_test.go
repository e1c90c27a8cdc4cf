package postgres

import (
	"errors"
	"testing"

	lstore "github.com/leadership-go/leadership/store"
)

// Endpoints, Username and Password replace the DSN's hosts and
// credentials, each endpoint with the DSN's TLS settings.
func TestEndpointsOverride(t *testing.T) {
	cfg := &Config{
		DSN:       lstore.Secret("postgres://u:p@dsnhost:5432/db?sslmode=verify-full&sslrootcert=" + t.TempDir() + "/none"),
		Endpoints: []string{"a.example:1", "b.example:2"},
		Username:  "x",
		Password:  "y",
	}
	st, err := cfg.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.poolConfig(string(cfg.DSN), &st); err == nil {
		t.Fatal("a missing sslrootcert file was accepted")
	}

	cfg.DSN = "postgres://u:p@dsnhost:5432/db?sslmode=disable"
	pc, err := cfg.poolConfig(string(cfg.DSN), &st)
	if err != nil {
		t.Fatal(err)
	}
	cc := pc.ConnConfig
	if cc.Host != "a.example" || cc.Port != 1 || cc.User != "x" || cc.Password != "y" {
		t.Errorf("host %s:%d user %q password %q, want a.example:1 x y", cc.Host, cc.Port, cc.User, cc.Password)
	}
	if len(cc.Fallbacks) != 1 || cc.Fallbacks[0].Host != "b.example" || cc.Fallbacks[0].Port != 2 {
		t.Errorf("fallbacks %+v, want b.example:2 only", cc.Fallbacks)
	}

	for _, bad := range []string{"nohost", "h:0x", "h:70000"} {
		c := &Config{DSN: cfg.DSN, Endpoints: []string{bad}}
		st, err := c.resolve()
		if err == nil {
			_, err = c.poolConfig(string(c.DSN), &st)
		}
		var ce *configError
		if !errors.As(err, &ce) || ce.Field != "Endpoints" || !errors.Is(err, errInvalidConfig) || !errors.Is(err, lstore.ErrInvalidConfig) {
			t.Errorf("endpoint %q: %v, want a *configError on Endpoints", bad, err)
		}
	}
	c := &Config{DSN: cfg.DSN, RequestTimeout: -1}
	if _, err := c.resolve(); !errors.Is(err, lstore.ErrInvalidConfig) {
		t.Errorf("negative RequestTimeout: %v", err)
	}
}
