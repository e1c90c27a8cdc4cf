package postgres

import (
	"crypto/tls"
	"errors"
	"testing"

	lstore "github.com/leadership-go/leadership/store"
)

// Username and Password replace the DSN's credentials; the DSN's hosts,
// several of them too, are pgx's to try in order.
func TestCredentialsOverride(t *testing.T) {
	cfg := &Config{
		DSN:      lstore.Secret("postgres://u:p@dsnhost:5432/db?sslmode=verify-full&sslrootcert=" + t.TempDir() + "/none"),
		Username: "x",
		Password: "y",
	}
	st, err := cfg.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.poolConfig(string(cfg.DSN), &st); err == nil {
		t.Fatal("a missing sslrootcert file was accepted")
	}

	cfg.DSN = "postgres://u:p@a.example:1,b.example:2/db?sslmode=disable"
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

	cfg = &Config{DSN: "postgres://u:p@h1:5432,h2:99999/db?sslmode=disable"}
	var ce *configError
	if _, err := cfg.poolConfig(string(cfg.DSN), &st); !errors.As(err, &ce) || ce.Field != "DSN" || !errors.Is(err, lstore.ErrInvalidConfig) {
		t.Errorf("a DSN with a bad port: %v, want a *configError on DSN", err)
	}
	c := &Config{DSN: cfg.DSN, RequestTimeout: -1}
	if _, err := c.resolve(); !errors.Is(err, lstore.ErrInvalidConfig) {
		t.Errorf("negative RequestTimeout: %v", err)
	}
}

// Config.TLS applies to every host of the DSN: none is dropped, each is
// tried once, with TLS, verified against its own name unless the
// configuration names one.
func TestTLSKeepsEveryHost(t *testing.T) {
	for _, mode := range []string{"verify-full", "prefer", "disable"} {
		cfg := &Config{
			DSN: lstore.Secret("postgres://u:p@a.example:5432,b.example:5433,a.example:5432/db?sslmode=" + mode),
			TLS: &tls.Config{MinVersion: tls.VersionTLS12},
		}
		st, err := cfg.resolve()
		if err != nil {
			t.Fatal(err)
		}
		pc, err := cfg.poolConfig(string(cfg.DSN), &st)
		if err != nil {
			t.Fatalf("sslmode=%s: %v", mode, err)
		}
		cc := pc.ConnConfig
		if cc.Host != "a.example" || cc.TLSConfig == nil || cc.TLSConfig.ServerName != "a.example" {
			t.Errorf("sslmode=%s: primary %s with TLS %v", mode, cc.Host, cc.TLSConfig)
		}
		if len(cc.Fallbacks) != 1 {
			t.Fatalf("sslmode=%s: %d fallbacks, want b.example:5433 alone", mode, len(cc.Fallbacks))
		}
		f := cc.Fallbacks[0]
		if f.Host != "b.example" || f.Port != 5433 || f.TLSConfig == nil || f.TLSConfig.ServerName != "b.example" || f.TLSConfig.MinVersion != tls.VersionTLS12 {
			t.Errorf("sslmode=%s: fallback %s:%d with TLS %+v", mode, f.Host, f.Port, f.TLSConfig)
		}
	}
	named := &Config{DSN: "postgres://u:p@a.example,b.example/db", TLS: &tls.Config{ServerName: "db.internal"}}
	st, _ := named.resolve()
	pc, err := named.poolConfig(string(named.DSN), &st)
	if err != nil {
		t.Fatal(err)
	}
	if pc.ConnConfig.TLSConfig.ServerName != "db.internal" || pc.ConnConfig.Fallbacks[0].TLSConfig.ServerName != "db.internal" {
		t.Error("the configuration's ServerName was replaced")
	}
}
