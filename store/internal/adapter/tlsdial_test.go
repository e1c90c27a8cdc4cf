package adapter

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
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

func TestRemoteAlert(t *testing.T) {
	alert := &net.OpError{Op: "remote error", Err: errors.New("tls: unknown certificate authority")}
	if got := RemoteAlert(fmt.Errorf("open: %w", alert)); got != alert {
		t.Errorf("RemoteAlert(wrapped alert) = %v, want the alert", got)
	}
	for _, err := range []error{nil, errors.New("tls: bad certificate"), &net.OpError{Op: "dial", Err: errors.New("connection refused")}} {
		if got := RemoteAlert(err); got != nil {
			t.Errorf("RemoteAlert(%v) = %v, want nil", err, got)
		}
	}
}
