package adapter

import (
	"crypto/tls"
	"testing"
)

func TestForEndpoint(t *testing.T) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if got := ForEndpoint(cfg, "db.local:5432"); got.ServerName != "db.local" || got == cfg || cfg.ServerName != "" {
		t.Fatalf("ServerName %q (given config changed: %v)", got.ServerName, cfg.ServerName != "")
	}
	cfg.ServerName = "other"
	if got := ForEndpoint(cfg, "[::1]:5432"); got.ServerName != "other" {
		t.Fatalf("ServerName %q, want the one given", got.ServerName)
	}
}
