package open

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	s, err := Parse("etcd://alice:s%3Acret@h1:2379,h2:2380/ignored/path?tls=true&dial_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	if s.Scheme != "etcd" || strings.Join(s.Endpoints, ",") != "h1:2379,h2:2380" || s.Username != "alice" ||
		s.Password != "s:cret" || s.Path != "ignored/path" || s.Params.Get("tls") != "true" {
		t.Fatalf("%+v", s)
	}
	if got := s.String(); strings.Contains(got, "cret") || !strings.Contains(got, "alice:xxxxx@") {
		t.Fatalf("String leaks or mangles: %s", got)
	}
	zk, err := Parse("zk://candidate:pw@h:2181?acl=auth::crd,digest:reader:SecretDigest%3D:r,world:anyone:r")
	if err != nil {
		t.Fatal(err)
	}
	if got := zk.String(); strings.Contains(got, "SecretDigest") || strings.Contains(got, "pw") || !strings.Contains(got, "digest%3Areader%3Axxxxx%3Ar") {
		t.Fatalf("String leaks a ZooKeeper ACL digest or mangles it: %s", got)
	}
	pg, err := Parse(" postgres://u:p%40ss@h1,h2:5433/db?table=t&sslmode=verify-full&sslrootcert=ca.crt ")
	if err != nil {
		t.Fatal(err)
	}
	pg.Param("table")
	if got, want := pg.DSN(), "postgres://u:p%40ss@h1,h2:5433/db?sslmode=verify-full&sslrootcert=ca.crt"; got != want {
		t.Errorf("DSN: %s, want %s", got, want)
	}
	if err := pg.Check(); err != nil {
		t.Errorf("Check after DSN: %v, want the parameters it took read", err)
	}
	hp, err := (&Spec{Endpoints: []string{"h1", "[::1]", "h2:1"}}).HostPorts("2379")
	if err != nil || strings.Join(hp, ",") != "h1:2379,[::1]:2379,h2:1" {
		t.Fatalf("HostPorts: %v %v", hp, err)
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		url, field string
	}{
		{"127.0.0.1:2379", "scheme"},
		{"etcd://h1:2379,,h2:2379", "host"},
		{"etcd://h1:%zz/x%zz", "path"},
		{"etcd://h1:2379?%zz", "query"},
	} {
		_, err := Parse(tc.url)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field || !errors.Is(err, ErrInvalidURL) {
			t.Errorf("%s: %v, want field %s", tc.url, err, tc.field)
		}
	}
	if _, err := Parse("nohost"); !errors.Is(err, ErrUnknownScheme) {
		t.Errorf("missing scheme: %v", err)
	}
	if _, err := Parse("user:secret@host"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("secret in error: %v", err)
	}
}

func TestParams(t *testing.T) {
	s, _ := Parse("x://h:1?tls=maybe&dial_timeout=-1s&n=x&extra=1")
	p := newParams(s.Params)
	p.boolean("tls")
	var ce *ConfigError
	if err := p.done(); !errors.As(err, &ce) || ce.Field != "tls" {
		t.Fatalf("bad bool: %v", err)
	}
	p = newParams(s.Params)
	p.duration("dial_timeout")
	if err := p.done(); !errors.As(err, &ce) || ce.Field != "dial_timeout" {
		t.Fatalf("bad duration: %v", err)
	}
	s, _ = Parse("x://h:1?extra=1")
	if err := newParams(s.Params).done(); !errors.As(err, &ce) || ce.Field != "extra" {
		t.Fatalf("unknown parameter: %v", err)
	}
	s, _ = Parse("x://h:1?ca=/nonexistent")
	p = newParams(s.Params)
	tlsConfig(p)
	if err := p.done(); !errors.As(err, &ce) || ce.Field != "ca" {
		t.Fatalf("unreadable ca: %v", err)
	}
}
