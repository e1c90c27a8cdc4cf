package adapter

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// TestURLPasswordAndRedact: the password of a URL is found by hand in URLs
// that do not parse, and Redact masks it (as given, escaped and decoded)
// in an error's text; MaskURLError's error quotes neither the URL nor the
// failing part (issue 32).
func TestURLPasswordAndRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"https://admin:PW@[127.0.0.1":  "PW",
		"https://admin:P%2FW@h:1":      "P%2FW",
		"admin:PW@[127.0.0.1":          "PW",
		"https://admin:PW/127.0.0.1:1": "PW",
		"https://[::1]:443":            "",
		"https://h:443/x":              "",
		"https://admin@h":              "",
		"":                             "",
	} {
		if got := URLPassword(raw); got != want {
			t.Errorf("URLPassword(%q) = %q, want %q", raw, got, want)
		}
	}
	inner := errors.New(`Get "https://admin:P%2FW@h/version": P/W, P%2FW and P%2fW`)
	err := Redact(inner, "P%2FW")
	if s := err.Error(); strings.Contains(s, "P/W") || strings.Contains(s, "P%2FW") || !strings.Contains(s, Mask) {
		t.Errorf("Redact: %q", s)
	}
	if errors.Unwrap(err) != nil {
		t.Error("a redacted error unwraps to the original, which shows the secret")
	}
	if clean := errors.New("nothing secret"); Redact(clean, "PW") != clean {
		t.Error("Redact changed an error that shows no secret")
	}
	for _, raw := range []string{"k8s://user:PW@%zz/ns", "k8s://user:PW@[::1/ns", "k8s://user:PW/ns", "k8s://user:PW@ns:port"} {
		_, perr := url.Parse(raw)
		if perr == nil {
			t.Fatalf("url.Parse(%q) succeeded", raw)
		}
		m := MaskURLError(perr)
		var ue *url.Error
		if !errors.As(m, &ue) || strings.Contains(m.Error(), "PW") {
			t.Errorf("MaskURLError(%v) = %v", perr, m)
		}
	}
}
